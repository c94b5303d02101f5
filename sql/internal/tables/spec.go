package tables

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/sql/row"
)

// Connector describes a connector: what it reads or writes and its
// options.
type Connector struct {
	// Name is the value of the 'connector' option.
	Name string
	// Doc says what the connector is, in one sentence.
	Doc string
	// Source and Sink say whether a table of it can be read and written.
	Source, Sink bool
	// Options are the connector's options besides 'connector'.
	Options []Option
	// Metadata lists the metadata keys a column can read.
	Metadata []string
}

// Option describes one option of a connector.
type Option struct {
	Name     string
	Required bool
	// Default is the value an absent option has ("" if none).
	Default string
	Doc     string
}

// spec is a connector with the functions that build its source and
// sink; nil for the side it lacks.
type spec struct {
	Connector
	source func(t Table, o options, cols []int) (Source, error)
	// where, if set, is source narrowed by a Where.
	where func(t Table, o options, cols []int, w Where) (Source, error)
	// narrows, if set, reports whether where keeps only the rows that
	// match a Where on table column col (see Narrows).
	narrows func(t Table, col int) bool
	sink    func(t Table, o options, updating bool) (connector.Sink[row.Row], error)
}

// registry lists the connectors, in the order the docs present them.
var registry = []*spec{nexmarkSpec, filesystemSpec, printSpec, blackholeSpec, kafkaSpec, upsertKafkaSpec, postgresSpec, natsSpec}

// options are a table's options after check: every option of the spec,
// absent ones at their defaults ("" if none).
type options struct {
	table string
	m     map[string]string
}

// check rejects options the spec does not know and required options that
// are missing, and returns the options with defaults filled in.
func (c *spec) check(t Table) (options, error) {
	o := options{table: t.Name, m: map[string]string{}}
	for k, v := range t.Options {
		if k == "connector" {
			continue
		}
		if !slices.ContainsFunc(c.Options, func(op Option) bool { return op.Name == k }) {
			return o, t.errf(ErrOption, "unknown option %q for connector %q; its options: %s", k, c.Name, c.optionNames())
		}
		o.m[k] = v
	}
	for _, op := range c.Options {
		if _, ok := o.m[op.Name]; ok {
			continue
		}
		if op.Required {
			return o, t.errf(ErrOption, "missing required option %q of connector %q", op.Name, c.Name)
		}
		o.m[op.Name] = op.Default
	}
	return o, nil
}

func (c *spec) optionNames() string {
	var names []string
	for _, op := range c.Options {
		names = append(names, op.Name)
	}
	return strings.Join(names, ", ")
}

func (o options) get(name string) string { return o.m[name] }

func (o options) bad(name, want string) error {
	return fmt.Errorf("table %s: %w: option %q = %q: want %s", o.table, ErrOption, name, o.m[name], want)
}

// int returns an integer option, which must lie in [lo, hi].
func (o options) int(name string, lo, hi int64) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(o.m[name]), 10, 64)
	if err != nil || v < lo || v > hi {
		return 0, o.bad(name, fmt.Sprintf("an integer in [%d, %d]", lo, hi))
	}
	return v, nil
}

// bool returns a boolean option ("true" or "false", any case).
func (o options) bool(name string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(o.m[name])) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, o.bad(name, `"true" or "false"`)
}

// oneOf returns an option that must be one of values.
func (o options) oneOf(name string, values ...string) (string, error) {
	v := o.m[name]
	if !slices.Contains(values, v) {
		return "", o.bad(name, "one of "+strings.Join(values, ", "))
	}
	return v, nil
}
