package tables

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
	"github.com/weir-stream/weir/internal/testenv"
)

// kafkaTable has a key column, two value columns (one nested) and the
// four metadata columns.
func kafkaTable(opts map[string]string) Table {
	o := map[string]string{"connector": "kafka", "topic": "t1", "properties.bootstrap.servers": "localhost:1", "format": "json"}
	for k, v := range opts {
		if v == "" {
			delete(o, k)
		} else {
			o[k] = v
		}
	}
	return Table{Name: "events", Options: o, Columns: []Column{
		{Path: []string{"id"}, Type: types.VarcharType},
		{Path: []string{"amount"}, Type: types.DecimalOf(10, 2)},
		{Path: []string{"who", "name"}, Type: types.VarcharType},
		{Path: []string{"ts"}, Type: types.TimestampType, Metadata: "timestamp", Virtual: true},
		{Path: []string{"part"}, Type: types.IntType, Metadata: "partition", Virtual: true},
		{Path: []string{"off"}, Type: types.BigIntType, Metadata: "offset", Virtual: true},
		{Path: []string{"src"}, Type: types.VarcharType, Metadata: "topic", Virtual: true},
	}}
}

func TestKafkaSourceFillsKeyValueAndMetadataColumnsFromARecord(t *testing.T) {
	for _, c := range []struct {
		opts map[string]string
		key  []byte
	}{
		{map[string]string{"key.format": "raw", "key.fields": "id", "value.fields-include": "EXCEPT_KEY"}, []byte("k1")},
		{map[string]string{"key.format": "json", "key.fields": "id"}, []byte(`{"id":"k1"}`)},
	} {
		tb := kafkaTable(c.opts)
		l, err := kafkaLayoutOf(tb, mustCheck(t, tb), false)
		if err != nil {
			t.Fatal(err)
		}
		d, err := newKafkaDecoder(tb, l, []int{5, 2, 0, 3, 1, 4, 6})
		if err != nil {
			t.Fatal(err)
		}
		rec := &kgo.Record{Key: c.key, Value: []byte(`{"amount":"12.5","who":{"name":"ann"}}`), Topic: "t1", Partition: 3, Offset: 42,
			Timestamp: time.UnixMilli(1704067200123)}
		var r row.Row
		if err := d.decode(rec, &r); err != nil {
			t.Fatal(err)
		}
		want := []row.Value{row.BigInt(42), row.String("ann"), row.String("k1"), row.Timestamp(1704067200123),
			row.Decimal(1250), row.Int(3), row.String("t1")}
		if !row.EqualValues(r, row.Row{V: want}) {
			t.Fatalf("%v: got %v, want %v", c.opts, r.V, want)
		}
		if err := d.decode(&kgo.Record{Key: c.key}, &r); !errors.Is(err, errNullValue) {
			t.Fatalf("a tombstone: %v", err)
		}
	}
}

func mustCheck(t *testing.T, tb Table) options {
	t.Helper()
	c, o, err := lookup(tb)
	if err != nil || c == nil {
		t.Fatal(err)
	}
	return o
}

func TestKafkaSinkEncodesValuesKeysAndTombstones(t *testing.T) {
	tb := kafkaTable(map[string]string{"connector": "upsert-kafka", "format": "", "value.format": "json", "key.format": "json", "value.fields-include": "EXCEPT_KEY"})
	tb.PrimaryKey = []int{0}
	l, err := kafkaLayoutOf(tb, mustCheck(t, tb), true)
	if err != nil {
		t.Fatal(err)
	}
	at := map[int]int{0: 0, 1: 1, 2: 2}
	key := keyEncoder(tb, l, at)
	f, err := newRowFormat(tb, []Column{tb.Columns[1], tb.Columns[2]}, []int{1, 2}, false, false)
	if err != nil {
		t.Fatal(err)
	}
	f.upsert = true
	r := row.Row{Op: row.UpdateAfter, V: []row.Value{row.String("k1"), row.Decimal(-1), row.Null()}}
	v, _ := f.Encode(r)
	if got := string(key(r)) + " " + string(v); got != `{"id":"k1"} {"amount":-0.01,"who":{"name":null}}` {
		t.Fatalf("got %s", got)
	}
	r.Op = row.Delete
	if v, err := f.Encode(r); v != nil || err != nil {
		t.Fatalf("a delete: %q, %v; want a tombstone", v, err)
	}
}

func TestKafkaTablesRejectBadOptionsFormatsAndColumns(t *testing.T) {
	meta := kafkaTable(nil)
	meta.Columns = append(meta.Columns, Column{Path: []string{"h"}, Type: types.VarcharType, Metadata: "headers", Virtual: true})
	writableMeta := kafkaTable(nil)
	writableMeta.Columns[3].Virtual = false
	wrongMeta := kafkaTable(nil)
	wrongMeta.Columns[4].Type = types.BigIntType
	upsertNoKey := kafkaTable(map[string]string{"connector": "upsert-kafka", "format": "", "value.format": "json", "key.format": "json"})
	for _, c := range []struct {
		name   string
		tb     Table
		cols   []int
		source bool
		want   error
		says   string
	}{
		{"missing topic", kafkaTable(map[string]string{"topic": ""}), nil, true, ErrOption, `"topic"`},
		{"missing brokers", kafkaTable(map[string]string{"properties.bootstrap.servers": ""}), nil, false, ErrOption, `"properties.bootstrap.servers"`},
		{"missing format", kafkaTable(map[string]string{"format": ""}), nil, true, ErrOption, `"format"`},
		{"csv", kafkaTable(map[string]string{"format": "csv"}), nil, false, ErrFormat, `format "csv" is not supported yet`},
		{"bad startup mode", kafkaTable(map[string]string{"scan.startup.mode": "earliest"}), nil, true, ErrOption, "scan.startup.mode"},
		{"group offsets without group", kafkaTable(map[string]string{"scan.startup.mode": "group-offsets"}), nil, true, ErrOption, "properties.group.id"},
		{"timestamp without millis", kafkaTable(map[string]string{"scan.startup.mode": "timestamp"}), nil, true, ErrOption, "scan.startup.timestamp-millis"},
		{"bad delivery", kafkaTable(map[string]string{"sink.delivery-guarantee": "twice"}), nil, false, ErrOption, "sink.delivery-guarantee"},
		{"key fields without format", kafkaTable(map[string]string{"key.fields": "id"}), nil, true, ErrOption, "key.format"},
		{"unknown key field", kafkaTable(map[string]string{"key.fields": "nope", "key.format": "json"}), nil, true, ErrOption, "nope"},
		{"raw key of a decimal", kafkaTable(map[string]string{"key.fields": "amount", "key.format": "raw"}), nil, true, ErrFormat, "VARCHAR"},
		{"unknown metadata", meta, []int{7}, true, ErrColumn, `"headers"`},
		{"metadata of the wrong type", wrongMeta, []int{4}, true, ErrColumn, "column part"},
		{"written metadata", writableMeta, nil, false, ErrColumn, "column ts"},
		{"upsert without primary key", upsertNoKey, nil, false, ErrOption, "PRIMARY KEY"},
		{"upsert source without primary key", upsertNoKey, nil, true, ErrOption, "PRIMARY KEY"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.source {
				_, err = NewSource(c.tb, c.cols)
			} else {
				_, err = NewSink(c.tb, false)
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "table events") {
				t.Fatalf("got %v, want %v saying %s", err, c.want, c.says)
			}
		})
	}
}

func TestUpsertKafkaSourceReadsUpdatesAndTombstonesAsDeletesOfTheKey(t *testing.T) {
	tb := kafkaTable(map[string]string{"connector": "upsert-kafka", "format": "", "value.format": "json", "key.format": "raw", "value.fields-include": "EXCEPT_KEY"})
	tb.PrimaryKey = []int{0}
	if _, err := NewSource(tb, []int{1}); !errors.Is(err, ErrColumn) || !strings.Contains(err.Error(), "column id") {
		t.Fatalf("reading without the key: %v", err)
	}
	src, err := NewSource(tb, []int{1, 0})
	if err != nil || src.Bounded {
		t.Fatalf("%v, bounded %v", err, src.Bounded)
	}
	l, err := kafkaLayoutOf(tb, mustCheck(t, tb), true)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newKafkaDecoder(tb, l, []int{1, 0})
	if err != nil {
		t.Fatal(err)
	}
	d.upsert = true
	var r row.Row
	if err := d.decode(&kgo.Record{Key: []byte("k"), Value: []byte(`{"amount":1}`)}, &r); err != nil {
		t.Fatal(err)
	}
	if want := (row.Row{Op: row.UpdateAfter, V: []row.Value{row.Decimal(100), row.String("k")}}); r.Op != want.Op || !row.EqualValues(r, want) {
		t.Fatalf("a value: %v %v", r.Op, r.V)
	}
	if err := d.decode(&kgo.Record{Key: []byte("k")}, &r); err != nil {
		t.Fatal(err)
	}
	if want := (row.Row{Op: row.Delete, V: []row.Value{row.Null(), row.String("k")}}); r.Op != want.Op || !row.EqualValues(r, want) {
		t.Fatalf("a tombstone: %v %v", r.Op, r.V)
	}
}

func TestAvroCannotCarryAChangelog(t *testing.T) {
	tb := kafkaTable(map[string]string{"format": "avro"})
	if _, err := NewSink(tb, false); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSink(tb, true); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "changelog") {
		t.Fatalf("got %v", err)
	}
	tb.Columns = append(tb.Columns, Column{Path: []string{"gap"}, Type: types.IntervalType})
	if _, err := NewSink(tb, false); !errors.Is(err, ErrColumn) || !strings.Contains(err.Error(), "column gap") {
		t.Fatalf("an INTERVAL column: %v", err)
	}
}

var topicSeq atomic.Int64

// newTopic creates a topic on the test broker and deletes it after the
// test.
func newTopic(t *testing.T, brokers string, partitions int) string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	name := fmt.Sprintf("weir-sql-%d-%d", os.Getpid(), topicSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating topic %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		adm.DeleteTopics(ctx, name)
	})
	return name
}

// Rows written to a kafka table exactly-once come back from it, with
// their key and metadata.
func TestKafkaTableRoundTripsRowsThroughABroker(t *testing.T) {
	brokers := testenv.Require(t, "WEIR_KAFKA_BROKERS")
	topic := newTopic(t, brokers, 2)
	tb := kafkaTable(map[string]string{"topic": topic, "properties.bootstrap.servers": brokers,
		"key.format": "raw", "key.fields": "id", "scan.bounded.mode": "latest-offset"})
	sink, err := NewSink(tb, false)
	if err != nil {
		t.Fatal(err)
	}
	var rows []row.Row
	for i := range 40 {
		rows = append(rows, row.Row{V: []row.Value{row.String(fmt.Sprintf("k%02d", i)), row.Decimal(int64(i)), row.String("n")}})
	}
	p := weir.NewPipeline(weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}))
	weir.To(weir.FromSource(p, "rows", collection.Of(rows...)), "out", sink)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	src, err := NewSource(tb, []int{0, 1, 4, 6})
	if err != nil {
		t.Fatal(err)
	}
	if !src.Bounded {
		t.Fatal("scan.bounded.mode latest-offset is not bounded")
	}
	// A committed transaction's markers reach its partitions after the
	// commit returns (Kafka writes them asynchronously), and a bounded
	// read ends at the last stable offset when it opens: read again until
	// the last commit shows.
	var got []row.Row
	for deadline := time.Now().Add(30 * time.Second); ; {
		if got = readAll(t, src.Source, 2); len(got) >= len(rows) || time.Now().After(deadline) {
			break
		}
	}
	slices.SortFunc(got, func(a, b row.Row) int { return strings.Compare(a.V[0].S, b.V[0].S) })
	if len(got) != len(rows) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(rows))
	}
	for i, r := range got {
		if !row.Equal(r.V[0], rows[i].V[0]) || !row.Equal(r.V[1], rows[i].V[1]) || r.V[3] != row.String(topic) ||
			r.V[2].K != types.Int || r.V[2].I < 0 || r.V[2].I > 1 {
			t.Fatalf("row %d: %v", i, r.V)
		}
	}
}
