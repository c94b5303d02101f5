package tables

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// This file is the json format of rows: one JSON object per row, members
// named by the columns (a ROW column's fields in a nested object).
//
// Encoding: NULL is null, BOOLEAN true/false, INT, BIGINT, TIMESTAMP
// (epoch milliseconds) and INTERVAL (milliseconds) integers, DOUBLE as
// Go's encoding/json writes it (NaN and infinities as the strings "NaN",
// "Infinity", "-Infinity", as Flink's JSON format writes them), DECIMAL a
// number with exactly its scale's digits, VARCHAR a string escaped as
// encoding/json escapes it without HTML escaping. Equal rows encode to
// equal bytes. With changelog, an "op" member comes first: "+I", "-U",
// "+U" or "-D".
//
// Decoding is lenient where Flink's is: numbers and booleans may be
// given as strings, a VARCHAR column takes any JSON value's text, a
// TIMESTAMP is epoch milliseconds or SQL or ISO-8601 text, a missing
// member or null is NULL.

// jsonEncoder writes rows of the columns cols.
type jsonEncoder struct {
	cols      []Column
	changelog bool
	// idx[i] is where column i's value is in a row; nil means at i.
	idx []int
}

// appendRow appends r as one JSON object without a trailing newline.
func (e *jsonEncoder) appendRow(dst []byte, r row.Row) []byte {
	dst = append(dst, '{')
	first := true
	if e.changelog {
		dst = append(dst, `"op":"`...)
		dst = append(dst, r.Op.String()...)
		dst = append(dst, '"')
		first = false
	}
	var open []string // the nested objects open now, outermost first
	for i, c := range e.cols {
		parents := c.Path[:len(c.Path)-1]
		k := 0
		for k < len(open) && k < len(parents) && open[k] == parents[k] {
			k++
		}
		for len(open) > k {
			dst = append(dst, '}')
			open = open[:len(open)-1]
		}
		for _, name := range parents[k:] {
			if !first {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, name)
			dst = append(dst, ':', '{')
			open = append(open, name)
			first = true
		}
		if !first {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, c.Path[len(c.Path)-1])
		dst = append(dst, ':')
		at := i
		if e.idx != nil {
			at = e.idx[i]
		}
		dst = appendJSONValue(dst, r.V[at], c.Type)
		first = false
	}
	for range open {
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// appendJSONValue appends v, of type t, as JSON.
func appendJSONValue(dst []byte, v row.Value, t types.Type) []byte {
	if v.IsNull() {
		return append(dst, "null"...)
	}
	switch t.Kind {
	case types.Varchar:
		return appendJSONString(dst, v.S)
	case types.Boolean:
		return strconv.AppendBool(dst, v.Bool())
	case types.Double:
		return appendJSONFloat(dst, v.Float())
	case types.Decimal:
		return appendDecimal(dst, v.I, t.Scale)
	}
	return strconv.AppendInt(dst, v.I, 10)
}

// appendJSONFloat writes f as encoding/json does; NaN and the infinities,
// which JSON lacks, as strings.
func appendJSONFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		dst = append(dst, '"')
		return append(appendJavaDouble(dst, f), '"')
	}
	b, _ := json.Marshal(f)
	return append(dst, b...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as encoding/json does with HTML escaping
// off: '"', '\\' and control characters escaped, invalid UTF-8 as
// U+FFFD, U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonDecoder reads values of the columns cols from JSON objects.
type jsonDecoder struct {
	cols []Column
	// out[i] is where column i's value goes in the destination; nil
	// means column i goes to i.
	out []int
}

// decode parses one JSON object into a row of the decoder's columns.
func (d *jsonDecoder) decode(data []byte, r *row.Row) error {
	v := make([]row.Value, len(d.cols))
	if err := d.fill(data, v); err != nil {
		return err
	}
	*r = row.Row{V: v}
	return nil
}

// fill parses one JSON object and sets the decoder's columns in v.
func (d *jsonDecoder) fill(data []byte, v []row.Value) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return err
	}
	if top == nil {
		return fmt.Errorf("not a JSON object: %.40s", data)
	}
	var nested map[string]map[string]json.RawMessage // by parent path
	for i, c := range d.cols {
		obj := top
		for k := 0; k < len(c.Path)-1 && obj != nil; k++ {
			key := strings.Join(c.Path[:k+1], "\x00")
			sub, ok := nested[key]
			if !ok {
				if raw, present := obj[c.Path[k]]; present && !isNull(raw) {
					if err := json.Unmarshal(raw, &sub); err != nil {
						return fmt.Errorf("column %s: %s is not an object", c.Name(), strings.Join(c.Path[:k+1], "."))
					}
				}
				if nested == nil {
					nested = map[string]map[string]json.RawMessage{}
				}
				nested[key] = sub
			}
			obj = sub
		}
		at := i
		if d.out != nil {
			at = d.out[i]
		}
		raw, ok := obj[c.Path[len(c.Path)-1]]
		if !ok || isNull(raw) {
			v[at] = row.Null()
			continue
		}
		val, err := jsonValue(raw, c.Type)
		if err != nil {
			return fmt.Errorf("column %s: %w", c.Name(), err)
		}
		v[at] = val
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// jsonValue converts one JSON value to a value of type t.
func jsonValue(raw json.RawMessage, t types.Type) (row.Value, error) {
	text := string(bytes.TrimSpace(raw))
	quoted := strings.HasPrefix(text, `"`)
	if quoted {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return row.Value{}, err
		}
		if t.Kind == types.Varchar {
			return row.String(s), nil
		}
		text = strings.TrimSpace(s)
	}
	bad := func() (row.Value, error) {
		return row.Value{}, fmt.Errorf("want %s, got %.40s", t, raw)
	}
	switch t.Kind {
	case types.Varchar:
		return row.String(text), nil
	case types.Boolean:
		switch strings.ToLower(text) {
		case "true":
			return row.Bool(true), nil
		case "false":
			return row.Bool(false), nil
		}
	case types.Int:
		if i, err := strconv.ParseInt(text, 10, 32); err == nil {
			return row.Int(int32(i)), nil
		}
	case types.BigInt, types.Interval:
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return row.Value{K: t.Kind, I: i}, nil
		}
	case types.Double:
		switch text {
		case "NaN":
			return row.Double(math.NaN()), nil
		case "Infinity":
			return row.Double(math.Inf(1)), nil
		case "-Infinity":
			return row.Double(math.Inf(-1)), nil
		}
		if f, err := strconv.ParseFloat(text, 64); err == nil {
			return row.Double(f), nil
		}
	case types.Decimal:
		u, err := parseDecimal(text, t.Scale)
		if err != nil {
			return row.Value{}, err
		}
		return row.Decimal(u), nil
	case types.Timestamp:
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return row.Timestamp(i), nil
		}
		if quoted {
			ms, err := parseTimestamp(text)
			if err != nil {
				return row.Value{}, err
			}
			return row.Timestamp(ms), nil
		}
	}
	return bad()
}
