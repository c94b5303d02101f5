package tables

import (
	"errors"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/kafka"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// kafkaOptions are the options kafka and upsert-kafka share.
var kafkaOptions = []Option{
	{Name: "topic", Required: true, Doc: "the topic; a source may name several, separated by semicolons"},
	{Name: "properties.bootstrap.servers", Required: true, Doc: "the brokers, host:port separated by commas"},
	{Name: "properties.group.id", Doc: "the consumer group whose offsets scan.startup.mode 'group-offsets' starts from; the source commits its checkpointed offsets there for monitoring"},
	{Name: "key.format", Doc: "the format of message keys: raw (one VARCHAR field, the key's bytes) or json"},
	{Name: "value.fields-include", Default: "ALL", Doc: "ALL: the value holds every physical column; EXCEPT_KEY: all but the key fields"},
	{Name: "json.ignore-parse-errors", Default: "false", Doc: "skip messages that do not parse instead of failing the job"},
	{Name: "sink.delivery-guarantee", Default: "exactly-once", Doc: "exactly-once (Kafka transactions committed with checkpoints), at-least-once or none (both the idempotent producer, flushed at checkpoints)"},
	{Name: "sink.transactional-id-prefix", Doc: "prefix of the transactional ids of an exactly-once sink (default weir-<topic>-<operator>); two sinks that run at once must not share it"},
	{Name: "sink.partitioner", Default: "default", Doc: "default (by the key's hash; records without a key spread), round-robin"},
	{Name: "scan.startup.mode", Default: "earliest-offset", Doc: "where a fresh source starts: earliest-offset, latest-offset, group-offsets (earliest where the group has none) or timestamp"},
	{Name: "scan.startup.timestamp-millis", Doc: "the epoch milliseconds scan.startup.mode 'timestamp' starts from"},
	{Name: "scan.bounded.mode", Default: "unbounded", Doc: "unbounded, or latest-offset: read what the topics hold when the source opens, then end"},
}

var kafkaSpec = &spec{
	Connector: Connector{
		Name:   "kafka",
		Doc:    "Apache Kafka topics (connectors/kafka): an append-only table of JSON messages.",
		Source: true,
		Sink:   true,
		Options: append(slices.Clone(kafkaOptions),
			Option{Name: "format", Doc: "the value format: json or avro (value.format is the same option)"},
			Option{Name: "value.format", Doc: "the value format: json or avro"},
			Option{Name: "key.fields", Doc: "the columns of the key, separated by semicolons; needs key.format"},
		),
		Metadata: []string{"topic", "partition", "offset", "timestamp"},
	},
	source: func(t Table, o options, cols []int) (Source, error) {
		return kafkaSource(t, o, cols, false)
	},
	sink: func(t Table, o options, updating bool) (connector.Sink[row.Row], error) {
		return kafkaSink(t, o, updating, false)
	},
}

var upsertKafkaSpec = &spec{
	Connector: Connector{
		Name: "upsert-kafka",
		Doc: "A Kafka topic as a table keyed by its primary key: a message is the key's new row, a tombstone " +
			"(null value) deletes the key.",
		Source: true,
		Sink:   true,
		Options: append(slices.Clone(kafkaOptions),
			Option{Name: "value.format", Required: true, Doc: "the value format: json or avro"}),
		Metadata: []string{"topic", "partition", "offset", "timestamp"},
	},
	source: func(t Table, o options, cols []int) (Source, error) {
		return kafkaSource(t, o, cols, true)
	},
	sink: func(t Table, o options, updating bool) (connector.Sink[row.Row], error) {
		return kafkaSink(t, o, updating, true)
	},
}

// kafkaMetadata are the metadata a kafka source column can read, with
// their types.
var kafkaMetadata = map[string]types.Kind{
	"topic": types.Varchar, "partition": types.Int, "offset": types.BigInt, "timestamp": types.Timestamp,
}

// kafkaLayout is how a table's columns map onto Kafka messages.
type kafkaLayout struct {
	avro   bool  // the avro value format, else json
	keyRaw bool  // the raw key format
	key    []int // the key's columns (indexes into Table.Columns)
	value  []int // the value's columns
}

func kafkaLayoutOf(t Table, o options, upsert bool) (kafkaLayout, error) {
	var l kafkaLayout
	value := o.get("value.format")
	if f := o.get("format"); f != "" {
		if value != "" {
			return l, t.errf(ErrOption, "both 'format' and 'value.format' are set")
		}
		o.m["value.format"] = f
	} else if value == "" {
		return l, t.errf(ErrOption, "missing required option \"format\" (or \"value.format\") of connector %q", t.Options["connector"])
	}
	if err := checkFormat(t, o, "value.format", "json", "avro"); err != nil {
		return l, err
	}
	l.avro = o.get("value.format") == "avro"
	if _, err := o.bool("json.ignore-parse-errors"); err != nil {
		return l, err
	}
	physical := func(c Column) bool { return c.Metadata == "" && !c.Virtual }
	if upsert {
		if len(t.PrimaryKey) == 0 {
			return l, t.errf(ErrOption, "connector \"upsert-kafka\" needs a PRIMARY KEY, which is the message key")
		}
		if o.get("key.format") == "" {
			return l, t.errf(ErrOption, "missing required option \"key.format\" of connector \"upsert-kafka\"")
		}
		l.key = slices.Clone(t.PrimaryKey)
	} else if fields := o.get("key.fields"); fields != "" {
		if o.get("key.format") == "" {
			return l, t.errf(ErrOption, "option \"key.fields\" needs \"key.format\"")
		}
		for _, name := range strings.Split(fields, ";") {
			name = strings.TrimSpace(name)
			n := len(l.key)
			for i, c := range t.Columns {
				if c.Path[0] == name && physical(c) {
					l.key = append(l.key, i)
				}
			}
			if len(l.key) == n {
				return l, o.bad("key.fields", "names of physical columns; there is no column "+name)
			}
		}
	} else if o.get("key.format") != "" {
		return l, t.errf(ErrOption, "option \"key.format\" needs \"key.fields\"")
	}
	if len(l.key) > 0 {
		f, err := o.oneOf("key.format", "raw", "json")
		if err != nil {
			return l, t.errf(ErrFormat, "key format %q; connector %q supports raw, json", o.get("key.format"), t.Options["connector"])
		}
		l.keyRaw = f == "raw"
		if l.keyRaw && (len(l.key) != 1 || t.Columns[l.key[0]].Type.Kind != types.Varchar) {
			return l, t.errf(ErrFormat, "the raw key format takes one VARCHAR column as the key")
		}
	}
	include, err := o.oneOf("value.fields-include", "ALL", "EXCEPT_KEY")
	if err != nil {
		return l, err
	}
	for i, c := range t.Columns {
		if physical(c) && !(include == "EXCEPT_KEY" && slices.Contains(l.key, i)) {
			l.value = append(l.value, i)
		}
	}
	return l, nil
}

func brokersOf(o options) []string {
	var out []string
	for _, b := range strings.Split(o.get("properties.bootstrap.servers"), ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// kafkaSource reads a kafka table's messages as +I rows; an upsert-kafka
// table's as +U rows (the key's new row) and, for tombstones, -D rows
// that hold only the key columns (the others NULL), which cols must
// include.
func kafkaSource(t Table, o options, cols []int, upsert bool) (Source, error) {
	l, err := kafkaLayoutOf(t, o, upsert)
	if err != nil {
		return Source{}, err
	}
	if upsert {
		for _, k := range l.key {
			if !slices.Contains(cols, k) {
				return Source{}, t.columnErr(t.Columns[k], "reading an upsert-kafka table needs its primary key columns")
			}
		}
	}
	opts := kafka.SourceOptions[row.Row]{Brokers: brokersOf(o), Group: o.get("properties.group.id")}
	for _, topic := range strings.Split(o.get("topic"), ";") {
		if topic = strings.TrimSpace(topic); topic != "" {
			opts.Topics = append(opts.Topics, topic)
		}
	}
	if len(opts.Brokers) == 0 || len(opts.Topics) == 0 {
		return Source{}, o.bad("topic", "a topic and brokers in properties.bootstrap.servers")
	}
	mode, err := o.oneOf("scan.startup.mode", "earliest-offset", "latest-offset", "group-offsets", "timestamp")
	if err != nil {
		return Source{}, err
	}
	switch mode {
	case "latest-offset":
		opts.Start = kafka.StartLatest
	case "group-offsets":
		if opts.Group == "" {
			return Source{}, t.errf(ErrOption, "scan.startup.mode 'group-offsets' needs option \"properties.group.id\"")
		}
		opts.Start = kafka.StartGroupOffsets
	case "timestamp":
		ms, err := o.int("scan.startup.timestamp-millis", 0, math.MaxInt64/2)
		if err != nil {
			return Source{}, err
		}
		opts.Start, opts.StartTime = kafka.StartTimestamp, time.UnixMilli(ms)
	}
	opts.CommitOffsets = opts.Group != ""
	bounded, err := o.oneOf("scan.bounded.mode", "unbounded", "latest-offset")
	if err != nil {
		return Source{}, err
	}
	opts.Bounded = bounded == "latest-offset"
	if skip, _ := o.bool("json.ignore-parse-errors"); skip {
		opts.OnMalformed = connector.Skip
	}
	dec, err := newKafkaDecoder(t, l, cols)
	if err != nil {
		return Source{}, err
	}
	dec.upsert = upsert
	opts.Decode = dec.decode
	src, err := kafka.Source(opts)
	if err != nil {
		return Source{}, t.errf(ErrOption, "%v", err)
	}
	return Source{Source: src, Bounded: opts.Bounded}, nil
}

// kafkaDecoder builds a row of the requested columns from a record.
type kafkaDecoder struct {
	width  int
	key    *jsonDecoder // nil if no requested column is there
	value  filler       // nil if no requested column is there
	rawKey int          // the raw key's place in the row, or -1
	meta   []kafkaMeta
	// upsert makes rows +U, and a tombstone a -D of its key.
	upsert bool
}

// filler decodes a message value into the requested columns of a row.
type filler interface {
	fill(data []byte, v []row.Value) error
}

type kafkaMeta struct {
	out int
	key string
}

func newKafkaDecoder(t Table, l kafkaLayout, cols []int) (*kafkaDecoder, error) {
	d := &kafkaDecoder{width: len(cols), rawKey: -1}
	var jsonValue *jsonDecoder
	var avroOut []int // for avro: where each value column goes, or -1
	if l.avro {
		avroOut = make([]int, len(l.value))
		for k := range avroOut {
			avroOut[k] = -1
		}
	}
	for out, i := range cols {
		c := t.Columns[i]
		switch {
		case c.Metadata != "":
			kind, ok := kafkaMetadata[c.Metadata]
			if !ok {
				return nil, t.columnErr(c, "connector %q has no metadata %q; it has topic, partition, offset, timestamp", t.Options["connector"], c.Metadata)
			}
			if c.Type.Kind != kind {
				return nil, t.columnErr(c, "metadata %q is %s, not %s", c.Metadata, kind, c.Type.Kind)
			}
			d.meta = append(d.meta, kafkaMeta{out, c.Metadata})
		case c.Virtual:
			return nil, t.columnErr(c, "a computed column is not read from the connector")
		case slices.Contains(l.key, i) && l.keyRaw:
			d.rawKey = out
		case slices.Contains(l.key, i):
			if d.key == nil {
				d.key = &jsonDecoder{out: []int{}}
			}
			d.key.cols, d.key.out = append(d.key.cols, c), append(d.key.out, out)
		case l.avro:
			avroOut[slices.Index(l.value, i)] = out
			if d.value == nil {
				var vcols []Column
				for _, k := range l.value {
					vcols = append(vcols, t.Columns[k])
				}
				codec, err := newAvroCodec(t, vcols)
				if err != nil {
					return nil, err
				}
				codec.out = avroOut
				d.value = codec
			}
		default:
			if jsonValue == nil {
				jsonValue = &jsonDecoder{out: []int{}}
				d.value = jsonValue
			}
			jsonValue.cols, jsonValue.out = append(jsonValue.cols, c), append(jsonValue.out, out)
		}
	}
	return d, nil
}

var errNullValue = errors.New("the message has no value (a tombstone)")

func (d *kafkaDecoder) decode(rec *kgo.Record, r *row.Row) error {
	v := make([]row.Value, d.width)
	op := row.Insert
	switch {
	case d.upsert && rec.Value == nil:
		op = row.Delete
	case d.upsert:
		op = row.UpdateAfter
	}
	if d.value != nil && op != row.Delete {
		if rec.Value == nil {
			return errNullValue
		}
		if err := d.value.fill(rec.Value, v); err != nil {
			return err
		}
	}
	if d.key != nil && rec.Key != nil {
		if err := d.key.fill(rec.Key, v); err != nil {
			return errors.New("key: " + err.Error())
		}
	}
	if d.rawKey >= 0 && rec.Key != nil {
		v[d.rawKey] = row.String(string(rec.Key))
	}
	for _, m := range d.meta {
		switch m.key {
		case "topic":
			v[m.out] = row.String(rec.Topic)
		case "partition":
			v[m.out] = row.Int(rec.Partition)
		case "offset":
			v[m.out] = row.BigInt(rec.Offset)
		case "timestamp":
			v[m.out] = row.Timestamp(rec.Timestamp.UnixMilli())
		}
	}
	*r = row.Row{Op: op, V: v}
	return nil
}

// kafkaSink writes the table's rows as JSON values, keyed as the layout
// says. A kafka table's changelog carries the op as a leading "op" member
// (as the filesystem connector's); an upsert-kafka table writes inserts
// and updates as values of their key, deletes as tombstones, and drops
// -U rows (the +U that follows replaces the key's value).
func kafkaSink(t Table, o options, updating, upsert bool) (connector.Sink[row.Row], error) {
	l, err := kafkaLayoutOf(t, o, upsert)
	if err != nil {
		return nil, err
	}
	stored := t.stored()
	for _, i := range stored {
		if c := t.Columns[i]; c.Metadata != "" {
			return nil, t.columnErr(c, "metadata %q cannot be written; declare the column VIRTUAL", c.Metadata)
		}
	}
	// at[i] is column i's place in a sink row.
	at := make(map[int]int, len(stored))
	for k, i := range stored {
		at[i] = k
	}
	var cols []Column
	var idx []int
	for _, i := range l.value {
		cols, idx = append(cols, t.Columns[i]), append(idx, at[i])
	}
	f, err := newRowFormat(t, cols, idx, l.avro, updating && !upsert)
	if err != nil {
		return nil, err
	}
	f.upsert = upsert
	opts := kafka.SinkOptions[row.Row]{Brokers: brokersOf(o), Topic: o.get("topic"),
		Format: f, TransactionalIDPrefix: o.get("sink.transactional-id-prefix")}
	if len(opts.Brokers) == 0 || strings.Contains(opts.Topic, ";") {
		return nil, o.bad("topic", "one topic, and brokers in properties.bootstrap.servers")
	}
	if len(l.key) > 0 {
		opts.Key = keyEncoder(t, l, at)
	}
	delivery, err := o.oneOf("sink.delivery-guarantee", "exactly-once", "at-least-once", "none")
	if err != nil {
		return nil, err
	}
	if delivery != "exactly-once" {
		opts.Delivery = kafka.AtLeastOnce
	}
	part, err := o.oneOf("sink.partitioner", "default", "round-robin")
	if err != nil {
		return nil, err
	}
	if part == "round-robin" {
		opts.Partitioner = kafka.RoundRobinPartitioner
	}
	sink, err := kafka.Sink(opts)
	if err != nil {
		return nil, t.errf(ErrOption, "%v", err)
	}
	if !upsert {
		return sink, nil
	}
	return mapSink(sink, dropUpdateBefore(nil)), nil
}

// dropUpdateBefore returns the conversions for mapSink of an upserting
// sink: -U rows are dropped (the +U that follows replaces the key's row);
// a -D row fails the write with refuse if it is not nil.
func dropUpdateBefore(refuse error) func() func(dst, src []row.Row) ([]row.Row, error) {
	return func() func(dst, src []row.Row) ([]row.Row, error) {
		return func(dst, src []row.Row) ([]row.Row, error) {
			for _, r := range src {
				switch {
				case r.Op == row.UpdateBefore:
				case r.Op == row.Delete && refuse != nil:
					return dst, refuse
				default:
					dst = append(dst, r)
				}
			}
			return dst, nil
		}
	}
}

// keyEncoder returns the message key of a sink row.
func keyEncoder(t Table, l kafkaLayout, at map[int]int) func(row.Row) []byte {
	if l.keyRaw {
		k := at[l.key[0]]
		return func(r row.Row) []byte {
			if r.V[k].IsNull() {
				return nil
			}
			return []byte(r.V[k].S)
		}
	}
	enc := &jsonEncoder{}
	for _, i := range l.key {
		enc.cols, enc.idx = append(enc.cols, t.Columns[i]), append(enc.idx, at[i])
	}
	return func(r row.Row) []byte { return enc.appendRow(nil, r) }
}

// rowFormat is the value format of a message sink
// (format.Format[row.Row]); it only encodes.
type rowFormat struct {
	name      string
	appendRow func(dst []byte, r row.Row) []byte
	// upsert writes deletes as tombstones (a nil value).
	upsert bool
}

// newRowFormat returns the json or avro format of the columns cols, whose
// values are at idx in a row. With changelog, json rows carry their op;
// avro has no place for it.
func newRowFormat(t Table, cols []Column, idx []int, avro, changelog bool) (rowFormat, error) {
	if !avro {
		enc := &jsonEncoder{cols: cols, idx: idx, changelog: changelog}
		return rowFormat{name: "json", appendRow: enc.appendRow}, nil
	}
	if changelog {
		return rowFormat{}, t.errf(ErrUnsupported, "the avro format cannot carry the changelog of an updating query; use json (or upsert-kafka)")
	}
	c, err := newAvroCodec(t, cols)
	if err != nil {
		return rowFormat{}, err
	}
	c.idx = idx
	return rowFormat{name: "avro", appendRow: c.appendRow}, nil
}

// Encode returns r's value; for a delete of an upsert table nil, a
// tombstone.
func (f rowFormat) Encode(r row.Row) ([]byte, error) {
	if f.upsert && r.Op == row.Delete {
		return nil, nil
	}
	return f.appendRow(nil, r), nil
}

func (f rowFormat) Decode([]byte, *row.Row) error {
	return errors.New("the table's sink format does not decode")
}

func (f rowFormat) Name() string { return f.name }
