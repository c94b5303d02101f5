package objstore

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/parquet-go/parquet-go"
)

// Format encodes records into the bytes of one object (a part file) and
// decodes them back.
//
// NewEncoder is called once per part file with the writer its bytes go
// to; the sink calls Encode for each record in order and Close once, when
// the file is finished, before the object is uploaded for the last time.
// Close writes whatever a format keeps for the end (Parquet's footer) and
// must not close w. Extension is the file name's ending, such as ".jsonl".
//
// NewDecoder is called once per object a source reads, with its bytes and
// its name for messages. Decode returns records in the order Encode took
// them and io.EOF after the last one.
type Format[T any] interface {
	Extension() string
	NewEncoder(w io.Writer) Encoder[T]
	NewDecoder(data []byte, name string) (Decoder[T], error)
}

// Encoder writes the records of one part file. See Format.
type Encoder[T any] interface {
	Encode(v *T) error
	Close() error
}

// Decoder reads the records of one object. See Format.
type Decoder[T any] interface {
	Decode(v *T) error
}

// JSONLines is the format of one JSON document per line (encoding/json,
// without HTML escaping), extension ".jsonl". Decoding rejects a line
// that is not a T with an error naming the object and the line.
func JSONLines[T any]() Format[T] { return jsonLines[T]{} }

type jsonLines[T any] struct{}

func (jsonLines[T]) Extension() string { return ".jsonl" }

func (jsonLines[T]) NewEncoder(w io.Writer) Encoder[T] {
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false)
	return jsonEncoder[T]{e}
}

type jsonEncoder[T any] struct{ e *json.Encoder }

func (e jsonEncoder[T]) Encode(v *T) error { return e.e.Encode(v) }
func (jsonEncoder[T]) Close() error        { return nil }

func (jsonLines[T]) NewDecoder(data []byte, name string) (Decoder[T], error) {
	return &jsonDecoder[T]{data: data, name: name}, nil
}

type jsonDecoder[T any] struct {
	data []byte
	name string
	line int
}

func (d *jsonDecoder[T]) Decode(v *T) error {
	for len(d.data) > 0 {
		line := d.data
		if i := bytes.IndexByte(d.data, '\n'); i >= 0 {
			line, d.data = d.data[:i], d.data[i+1:]
		} else {
			d.data = nil
		}
		d.line++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var zero T
		*v = zero
		if err := json.Unmarshal(line, v); err != nil {
			return fmt.Errorf("objstore: %s line %d: %w", d.name, d.line, err)
		}
		return nil
	}
	return io.EOF
}

// CSVOptions configure the CSV format.
type CSVOptions struct {
	// Header, if not empty, is written as the first row of every part
	// file, and skipped (after checking that it matches) when reading.
	Header []string
	// Comma is the field delimiter; zero means ','.
	Comma rune
}

// CSV is the format of one row of comma-separated values per record
// (encoding/csv, RFC 4180), extension ".csv". toRow gives a record's
// fields; fromRow, which a source needs and a sink does not (it may be
// nil there), builds a record from them.
func CSV[T any](toRow func(T) []string, fromRow func([]string) (T, error), o CSVOptions) Format[T] {
	return csvFormat[T]{toRow: toRow, fromRow: fromRow, o: o}
}

type csvFormat[T any] struct {
	toRow   func(T) []string
	fromRow func([]string) (T, error)
	o       CSVOptions
}

func (csvFormat[T]) Extension() string { return ".csv" }

func (f csvFormat[T]) NewEncoder(w io.Writer) Encoder[T] {
	cw := csv.NewWriter(w)
	if f.o.Comma != 0 {
		cw.Comma = f.o.Comma
	}
	return &csvEncoder[T]{w: cw, f: f, header: len(f.o.Header) > 0}
}

type csvEncoder[T any] struct {
	w      *csv.Writer
	f      csvFormat[T]
	header bool // a header is still to be written
}

func (e *csvEncoder[T]) Encode(v *T) error {
	if e.f.toRow == nil {
		return errors.New("objstore: the CSV format has no toRow function to write with")
	}
	if e.header {
		e.header = false
		if err := e.w.Write(e.f.o.Header); err != nil {
			return err
		}
	}
	if err := e.w.Write(e.f.toRow(*v)); err != nil {
		return err
	}
	// Flush per record, so that the sink sees the file's true size for
	// its rolling policy; csv.Writer still batches in its bufio.Writer's
	// stead because the sink's buffer takes the bytes.
	e.w.Flush()
	return e.w.Error()
}

func (e *csvEncoder[T]) Close() error {
	e.w.Flush()
	return e.w.Error()
}

func (f csvFormat[T]) NewDecoder(data []byte, name string) (Decoder[T], error) {
	if f.fromRow == nil {
		return nil, errors.New("objstore: the CSV format has no fromRow function to read with")
	}
	r := csv.NewReader(bytes.NewReader(data))
	if f.o.Comma != 0 {
		r.Comma = f.o.Comma
	}
	r.ReuseRecord = true
	d := &csvDecoder[T]{r: r, f: f, name: name}
	if len(f.o.Header) > 0 {
		row, err := r.Read()
		if err == io.EOF {
			return d, nil
		}
		if err != nil {
			return nil, fmt.Errorf("objstore: %s: header: %w", name, err)
		}
		if !slices.Equal(row, f.o.Header) {
			return nil, fmt.Errorf("objstore: %s: header %q, want %q", name, row, f.o.Header)
		}
	}
	return d, nil
}

type csvDecoder[T any] struct {
	r    *csv.Reader
	f    csvFormat[T]
	name string
}

func (d *csvDecoder[T]) Decode(v *T) error {
	row, err := d.r.Read()
	if err == io.EOF {
		return io.EOF
	}
	if err != nil {
		return fmt.Errorf("objstore: %s: %w", d.name, err)
	}
	rec, err := d.f.fromRow(row)
	if err != nil {
		line, _ := d.r.FieldPos(0)
		return fmt.Errorf("objstore: %s line %d: %w", d.name, line, err)
	}
	*v = rec
	return nil
}

// Parquet is the Apache Parquet format (github.com/parquet-go/parquet-go),
// extension ".parquet": T must be a struct whose schema parquet-go derives
// from its fields and their `parquet:"..."` tags. Rows are buffered into
// row groups in memory and the footer is written when the file is
// finished, so a part file's size grows in steps (the rolling policy sees
// the bytes written so far), and every file is rolled at each checkpoint
// (as Flink's bulk formats are).
func Parquet[T any]() Format[T] { return parquetFormat[T]{} }

type parquetFormat[T any] struct{}

func (parquetFormat[T]) Extension() string { return ".parquet" }

func (parquetFormat[T]) NewEncoder(w io.Writer) Encoder[T] {
	return &parquetEncoder[T]{w: parquet.NewGenericWriter[T](w)}
}

type parquetEncoder[T any] struct {
	w   *parquet.GenericWriter[T]
	one [1]T
}

func (e *parquetEncoder[T]) Encode(v *T) error {
	e.one[0] = *v
	_, err := e.w.Write(e.one[:])
	return err
}

func (e *parquetEncoder[T]) Close() error { return e.w.Close() }

func (parquetFormat[T]) NewDecoder(data []byte, name string) (Decoder[T], error) {
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("objstore: %s: %w", name, err)
	}
	return &parquetDecoder[T]{r: parquet.NewGenericReader[T](f), name: name}, nil
}

type parquetDecoder[T any] struct {
	r    *parquet.GenericReader[T]
	name string
	one  [1]T
}

func (d *parquetDecoder[T]) Decode(v *T) error {
	n, err := d.r.Read(d.one[:])
	if n == 1 {
		*v = d.one[0]
		return nil
	}
	if err == nil || err == io.EOF {
		return io.EOF
	}
	return fmt.Errorf("objstore: %s: %w", d.name, err)
}
