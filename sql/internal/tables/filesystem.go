package tables

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/internal/sql/row"
)

var filesystemSpec = &spec{
	Connector: Connector{
		Name: "filesystem",
		Doc: "Files of JSON lines (connectors/file): read from a file or a directory's files, written " +
			"exactly-once into part files of a directory.",
		Source: true,
		Sink:   true,
		Options: []Option{
			{Name: "path", Required: true, Doc: "a file or a directory; a source reads the file or the directory's files (the part files a sink wrote, in the order they were written, if it has any, else every file not starting with '.' or '_', by name); a sink writes part files into the directory"},
			{Name: "format", Required: true, Doc: "json"},
			{Name: "json.ignore-parse-errors", Default: "false", Doc: "skip lines that do not parse instead of failing the job"},
		},
	},
	source: filesystemSource,
	sink:   filesystemSink,
}

// checkFormat accepts the formats a connector has and names the missing
// ones.
func checkFormat(t Table, o options, option string, have ...string) error {
	f := o.get(option)
	if slices.Contains(have, f) {
		return nil
	}
	if f == "avro" || f == "csv" || f == "raw" || f == "debezium-json" || f == "canal-json" {
		return t.errf(ErrFormat, "format %q is not supported yet by connector %q; supported: %s", f, t.Options["connector"], strings.Join(have, ", "))
	}
	return t.errf(ErrFormat, "unknown format %q (option %q); connector %q supports: %s", f, option, t.Options["connector"], strings.Join(have, ", "))
}

func filesystemSource(t Table, o options, cols []int) (Source, error) {
	if err := checkFormat(t, o, "format", "json"); err != nil {
		return Source{}, err
	}
	if err := t.noMetadata("filesystem", cols); err != nil {
		return Source{}, err
	}
	skip, err := o.bool("json.ignore-parse-errors")
	if err != nil {
		return Source{}, err
	}
	paths, err := inputFiles(o.get("path"))
	if err != nil {
		return Source{}, o.bad("path", "an existing file or directory ("+err.Error()+")")
	}
	dec := &jsonDecoder{}
	for _, i := range cols {
		if c := t.Columns[i]; c.Virtual {
			return Source{}, t.columnErr(c, "a computed column is not read from the connector")
		}
		dec.cols = append(dec.cols, t.Columns[i])
	}
	policy := connector.Fail
	if skip {
		policy = connector.Skip
	}
	return Source{Source: file.ParsedLines(file.Options{OnMalformed: policy}, dec.decode, paths...), Bounded: true}, nil
}

// inputFiles lists what a source of path reads: path itself if it is a
// file; in a directory the part files a sink wrote, in the order they
// were written, if it holds any, else every file not starting with '.'
// or '_', by name.
func inputFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	parts, err := file.Parts(path)
	if err != nil || len(parts) > 0 {
		return parts, err
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && !strings.HasPrefix(n, ".") && !strings.HasPrefix(n, "_") {
			out = append(out, filepath.Join(path, n))
		}
	}
	return out, nil
}

// filesystemSink writes JSON lines with connectors/file's JSON sink: part
// files, exactly-once by two-phase commit with checkpoints.
func filesystemSink(t Table, o options, updating bool) (connector.Sink[row.Row], error) {
	if err := checkFormat(t, o, "format", "json"); err != nil {
		return nil, err
	}
	stored := t.stored()
	if err := t.noMetadata("filesystem", stored); err != nil {
		return nil, err
	}
	if _, err := o.bool("json.ignore-parse-errors"); err != nil {
		return nil, err
	}
	enc := &jsonEncoder{changelog: updating}
	for _, i := range stored {
		enc.cols = append(enc.cols, t.Columns[i])
	}
	return mapSink(file.JSONSink[json.RawMessage](o.get("path")), encodeBatch(enc)), nil
}

// encodeBatch returns the conversions for mapSink that encode each row
// into one buffer per writer, reused by the next batch.
func encodeBatch(enc *jsonEncoder) func() func(dst []json.RawMessage, src []row.Row) ([]json.RawMessage, error) {
	return func() func(dst []json.RawMessage, src []row.Row) ([]json.RawMessage, error) {
		var buf []byte
		return func(dst []json.RawMessage, src []row.Row) ([]json.RawMessage, error) {
			buf = buf[:0]
			ends := make([]int, 0, len(src))
			for _, r := range src {
				buf = enc.appendRow(buf, r)
				ends = append(ends, len(buf))
			}
			start := 0
			for _, end := range ends {
				dst = append(dst, json.RawMessage(buf[start:end:end]))
				start = end
			}
			return dst, nil
		}
	}
}
