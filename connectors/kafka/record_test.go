package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/connectors/format"
)

// produceRecords writes recs as given (partition, key, value, timestamp,
// headers) to topic, outside any transaction.
func produceRecords(t testing.TB, topic string, recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers(t)...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing to %s: %v", topic, err)
	}
}

// readUntilEOF reads a bounded reader to its end, or to its first error.
func readUntilEOF[T any](t *testing.T, r connector.Reader[T]) ([]T, error) {
	t.Helper()
	buf := make([]T, 16)
	var got []T
	for {
		n, err := r.Read(t.Context(), buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
	}
}

func openOne[T any](t *testing.T, src connector.Source[T]) connector.Reader[T] {
	t.Helper()
	r, err := src.Open(t.Context(), connector.SubtaskInfo{Operator: "src", Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestRecordSourceYieldsEachRecordWithItsKeyTimestampHeadersAndPlace(t *testing.T) {
	topic := newTopic(t, 1)
	at := time.UnixMilli(1_700_000_000_123)
	produceRecords(t, topic,
		&kgo.Record{Key: []byte("k1"), Value: []byte(`"a"`), Timestamp: at,
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("1")}, {Key: "h", Value: []byte("2")}}},
		&kgo.Record{Value: []byte(`"b"`), Timestamp: at.Add(time.Second)},
		&kgo.Record{Key: []byte("k1"), Timestamp: at.Add(2 * time.Second)}, // a tombstone
		&kgo.Record{Key: []byte("k2"), Value: []byte(`""`), Timestamp: at.Add(3 * time.Second)})
	src, err := RecordSource(SourceOptions[string]{Brokers: brokers(t), Topics: []string{topic},
		Format: format.JSON[string](), Bounded: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := readUntilEOF(t, openOne(t, src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Record[string]{
		{Topic: topic, Partition: 0, Offset: 0, Timestamp: at, Key: []byte("k1"), Value: "a",
			Headers: []Header{{"h", []byte("1")}, {"h", []byte("2")}}},
		{Topic: topic, Partition: 0, Offset: 1, Timestamp: at.Add(time.Second), Value: "b"},
		{Topic: topic, Partition: 0, Offset: 2, Timestamp: at.Add(2 * time.Second), Key: []byte("k1"), Tombstone: true},
		{Topic: topic, Partition: 0, Offset: 3, Timestamp: at.Add(3 * time.Second), Key: []byte("k2"), Value: ""},
	}
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g := got[i]
		if !g.Timestamp.Equal(want[i].Timestamp) {
			t.Errorf("record %d: timestamp %v, want %v", i, g.Timestamp, want[i].Timestamp)
		}
		g.Timestamp = want[i].Timestamp
		if !reflect.DeepEqual(g, want[i]) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, g, want[i])
		}
	}
	if got[0].EventTime() != at.UnixMilli() {
		t.Errorf("EventTime %d, want %d", got[0].EventTime(), at.UnixMilli())
	}
}

func TestRecordSourceSkipsTombstonesWhenAskedAndFailsOnAnUndecodableValue(t *testing.T) {
	topic := newTopic(t, 1)
	produceRecords(t, topic, &kgo.Record{Value: []byte(`"a"`)}, &kgo.Record{Key: []byte("gone")},
		&kgo.Record{Value: []byte(`{broken`)})
	src, err := RecordSource(SourceOptions[string]{Brokers: brokers(t), Topics: []string{topic},
		Format: format.JSON[string](), Bounded: true, SkipTombstones: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := readUntilEOF(t, openOne(t, src))
	var merr *connector.MalformedError
	if !errors.As(err, &merr) || merr.Where != fmt.Sprintf("topic %s partition 0 offset 2", topic) {
		t.Fatalf("got %v, want a MalformedError at offset 2", err)
	}
	if len(got) != 1 || got[0].Value != "a" {
		t.Errorf("read %+v, want only the record a", got)
	}
}

// In the value mode a tombstone is malformed for a Format, unless
// SkipTombstones drops it.
func TestValueSourceSkipsTombstonesOnlyWhenAsked(t *testing.T) {
	topic := newTopic(t, 1)
	produceRecords(t, topic, &kgo.Record{Value: []byte(`"a"`)}, &kgo.Record{Key: []byte("gone")},
		&kgo.Record{Value: []byte(`"c"`)})
	skipping := stringSource(t, SourceOptions[string]{Topics: []string{topic}, Bounded: true, SkipTombstones: true})
	if got, err := readUntilEOF(t, openOne(t, skipping)); err != nil || !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("with SkipTombstones: read %q, %v; want [a c]", got, err)
	}
	strict := stringSource(t, SourceOptions[string]{Topics: []string{topic}, Bounded: true})
	_, err := readUntilEOF(t, openOne(t, strict))
	var merr *connector.MalformedError
	if !errors.As(err, &merr) || merr.Where != fmt.Sprintf("topic %s partition 0 offset 1", topic) {
		t.Errorf("without SkipTombstones: got %v, want a MalformedError at offset 1", err)
	}
}

// With UseTimestamps a reader hands out its records' Kafka timestamps,
// and its event-time progress follows the slowest partition's.
func TestKafkaTimestampsAreTheEventTimesPerPartition(t *testing.T) {
	topic := newTopic(t, 2)
	ms := time.UnixMilli
	produceRecords(t, topic,
		&kgo.Record{Partition: 0, Value: []byte(`"a"`), Timestamp: ms(1000)},
		&kgo.Record{Partition: 0, Value: []byte(`"b"`), Timestamp: ms(2000)},
		&kgo.Record{Partition: 1, Value: []byte(`"c"`), Timestamp: ms(10)},
		&kgo.Record{Partition: 1, Value: []byte(`"d"`), Timestamp: ms(20)})
	r := openOne(t, stringSource(t, SourceOptions[string]{Topics: []string{topic}, Bounded: true}))
	r.(connector.Timestamper).UseTimestamps()
	buf := make([]string, 16)
	got := map[string]int64{}
	for {
		n, err := r.Read(t.Context(), buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		tss := r.(connector.Timestamper).Timestamps()
		if len(tss) != n {
			t.Fatalf("%d records, %d timestamps", n, len(tss))
		}
		for i := range n {
			got[buf[i]] = tss[i]
		}
	}
	if want := map[string]int64{"a": 1000, "b": 2000, "c": 10, "d": 20}; !reflect.DeepEqual(got, want) {
		t.Errorf("timestamps %v, want %v", got, want)
	}
	if p := r.(connector.EventTimer[string]).EventTimeProgress(); p != 20 {
		t.Errorf("progress %d, want 20: the slower partition's highest timestamp", p)
	}
}

// A job whose source takes the Kafka timestamps as event time windows
// by them, though the values hold no time at all.
func TestJobWindowsByKafkaTimestamps(t *testing.T) {
	topic := newTopic(t, 2)
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: []byte(`"x"`), Timestamp: time.UnixMilli(int64(i) * 500)})
	}
	produceRecords(t, topic, recs...)
	src := stringSource(t, SourceOptions[string]{Topics: []string{topic}, Bounded: true})
	p := weir.NewPipeline(weir.WithParallelism(1))
	in := weir.FromSource(p, "in", src, weir.WithSourceTimestamps(time.Second))
	counts := weir.AggregateWindow(weir.WindowBy(weir.KeyBy(in, func(s string) string { return s }), weir.Tumbling(2*time.Second)), counter{})
	out := collection.NewSink[weir.Windowed[string, int]]()
	weir.To(counts, "out", out)
	if err := p.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range out.Records() {
		got = append(got, fmt.Sprintf("%d:%d", w.Window.Start, w.Value))
	}
	slices.Sort(got)
	if want := []string{"0:4", "2000:4", "4000:2"}; !slices.Equal(got, want) {
		t.Errorf("windows %v, want %v", got, want)
	}
}

type counter struct{}

func (counter) Create() int             { return 0 }
func (counter) Add(n int, _ string) int { return n + 1 }
func (counter) Merge(a, b int) int      { return a + b }
func (counter) Result(n int) int        { return n }

// A record that does not decode fails the job at once, naming where it
// is, with checkpoints and a restart strategy that would otherwise
// restart the job into the same record again and again.
func TestAnUndecodableRecordFailsTheJobWithoutRestarts(t *testing.T) {
	topic := newTopic(t, 1)
	produceRecords(t, topic, &kgo.Record{Value: []byte(`"a"`)}, &kgo.Record{Key: []byte("gone")})
	src := stringSource(t, SourceOptions[string]{Topics: []string{topic}})
	p := weir.NewPipeline(weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}),
		weir.WithRestartStrategy("fixed-delay", 10, time.Millisecond, 0, 0))
	weir.To(weir.FromSource(p, "in", src), "out", collection.NewSink[string]())
	err := p.Run(t.Context())
	if !errors.Is(err, connector.ErrMalformed) || !strings.Contains(err.Error(), fmt.Sprintf("topic %s partition 0 offset 1", topic)) {
		t.Fatalf("got %v, want a malformed record at topic %s partition 0 offset 1", err, topic)
	}
	if n := len(p.Report().Recoveries); n != 0 {
		t.Errorf("the job restarted %d times", n)
	}
}

// withDecode carries every option but Format and Decode over.
func TestWithDecodeCopiesEveryOption(t *testing.T) {
	var o SourceOptions[string]
	v := reflect.ValueOf(&o).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch v.Type().Field(i).Name {
		case "Format", "Decode":
			continue
		}
		switch f.Kind() {
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.String:
			f.SetString("x")
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Struct:
			f.Set(reflect.ValueOf(time.UnixMilli(7)))
		default:
			t.Fatalf("field %s of kind %v: teach this test to set it", v.Type().Field(i).Name, f.Kind())
		}
	}
	u := reflect.ValueOf(withDecode(o, func(*kgo.Record, *int) error { return nil }))
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if name == "Format" || name == "Decode" {
			continue
		}
		if !reflect.DeepEqual(v.Field(i).Interface(), u.FieldByName(name).Interface()) {
			t.Errorf("option %s is not carried over", name)
		}
	}
}
