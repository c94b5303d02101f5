package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
	"github.com/weir-stream/weir/connectors/format"
)

func jsonValues(n int, f func(i int) string) ([][]byte, []string) {
	vals := make([][]byte, n)
	want := make([]string, n)
	for i := range n {
		want[i] = f(i)
		vals[i] = []byte(strconv.Quote(want[i]))
	}
	return vals, want
}

func stringSource(t *testing.T, o SourceOptions[string]) connector.Source[string] {
	t.Helper()
	o.Brokers = brokers(t)
	if o.Format == nil {
		o.Format = format.JSON[string]()
	}
	src, err := Source(o)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestSourceConformance(t *testing.T) {
	topic := newTopic(t, 5)
	vals, want := jsonValues(200, func(i int) string { return fmt.Sprintf("v%03d", i) })
	produce(t, topic, 5, vals...)
	// A committed and an aborted transaction leave markers and invisible
	// records the positions must step over.
	txnProduce(t, topic, true, `"c1"`, `"c2"`)
	txnProduce(t, topic, false, `"aborted"`)
	want = append(want, "c1", "c2")
	connectortest.TestSource(t, connectortest.SourceCase[string]{
		New: func(t *testing.T) connector.Source[string] {
			return stringSource(t, SourceOptions[string]{Topics: []string{topic}, Bounded: true})
		},
		Want:         want,
		Parallelism:  []int{1, 2, 3, 7},
		BadPositions: []connector.Position{{9}, {1, 5}, encodePosition(map[tp]int64{{"other-topic", 0}: 1})},
	})
}

// txnProduce writes values to partition 0 in one transaction and commits
// or aborts it.
func txnProduce(t *testing.T, topic string, commit bool, vals ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers(t)...), kgo.DefaultProduceTopic(topic),
		kgo.TransactionalID(topic+"-txn-"+strconv.FormatBool(commit)), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range vals {
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.EndTransaction(t.Context(), kgo.TransactionEndTry(commit)); err != nil {
		t.Fatal(err)
	}
	waitStable(t, topic, 0)
}

// waitStable waits until partition p of topic has no open transaction:
// EndTransaction returns before the coordinator has written the markers,
// and until then a read_committed reader stops at the last stable offset,
// before the transaction's records.
func waitStable(t *testing.T, topic string, p int32) {
	t.Helper()
	adm := admin(t, brokers(t))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	pollBroker(t, ctx, fmt.Sprintf("partition %s/%d still has an open transaction", topic, p), func() (bool, error) {
		stable, err := adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			return false, err
		}
		end, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return false, err
		}
		s, ok1 := stable.Lookup(topic, p)
		e, ok2 := end.Lookup(topic, p)
		return ok1 && ok2 && s.Err == nil && e.Err == nil && s.Offset == e.Offset, nil
	})
}

func readAll(t *testing.T, src connector.Source[string], n int) []string {
	t.Helper()
	got, err := connectortest.ReadAll(t.Context(), src, n)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, g := range got {
		all = append(all, g...)
	}
	slices.Sort(all)
	return all
}

func TestUndecodableRecordFailsNamingTopicPartitionAndOffset(t *testing.T) {
	topic := newTopic(t, 1)
	produce(t, topic, 1, []byte(`"a"`), []byte(`{broken`), []byte(`"c"`))
	src := stringSource(t, SourceOptions[string]{Topics: []string{topic}, Bounded: true})
	r, err := src.Open(t.Context(), connector.SubtaskInfo{Operator: "src", Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]string, 10)
	var got []string
	for {
		n, err := r.Read(t.Context(), buf)
		got = append(got, buf[:n]...)
		if err != nil {
			var merr *connector.MalformedError
			if !errors.As(err, &merr) || merr.Where != fmt.Sprintf("topic %s partition 0 offset 1", topic) {
				t.Fatalf("got %v, want a MalformedError at topic %s partition 0 offset 1", err, topic)
			}
			break
		}
	}
	// The position after the failure points at the bad record, so a
	// restored job meets it again rather than skipping it.
	pos, _ := decodePosition(r.Position())
	if !slices.Equal(got, []string{"a"}) || pos[tp{topic, 0}] != 1 {
		t.Errorf("read %q, position %v; want [a] and offset 1", got, pos)
	}
}

func TestUndecodableRecordGoesToTheDeadLetterTopicAndIsCounted(t *testing.T) {
	topic, dlq := newTopic(t, 2), newTopic(t, 1)
	produce(t, topic, 2, []byte(`"a"`), []byte(`"b"`), []byte(`not json`), []byte(`"d"`))
	var skipped atomic.Int64
	src := stringSource(t, SourceOptions[string]{Topics: []string{topic}, Bounded: true,
		OnMalformed: connector.Skip, DeadLetterTopic: dlq, Malformed: &skipped})
	if got, want := readAll(t, src, 2), []string{"a", "b", "d"}; !slices.Equal(got, want) {
		t.Errorf("read %q, want %q", got, want)
	}
	if skipped.Load() != 1 {
		t.Errorf("counted %d malformed records, want 1", skipped.Load())
	}
	dead := committed(t, dlq)[0]
	if len(dead) != 1 || string(dead[0].Value) != "not json" {
		t.Fatalf("dead-letter topic holds %v, want the one bad record", dead)
	}
	h := map[string]string{}
	for _, x := range dead[0].Headers {
		h[x.Key] = string(x.Value)
	}
	if h["weir-topic"] != topic || h["weir-partition"] != "0" || h["weir-offset"] != "1" || !strings.Contains(h["weir-error"], "json") {
		t.Errorf("dead-letter headers %v do not locate and explain the record", h)
	}
}

func TestStartPositions(t *testing.T) {
	topic := newTopic(t, 2)
	produce(t, topic, 2, []byte(`"old1"`), []byte(`"old2"`))
	time.Sleep(20 * time.Millisecond) // separate the record timestamps; not a timing assertion
	mid := time.Now()
	time.Sleep(20 * time.Millisecond)
	produce(t, topic, 2, []byte(`"new1"`), []byte(`"new2"`))

	group := topic + "-group"
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers(t)...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	latest, err := Source(SourceOptions[string]{Brokers: brokers(t), Topics: []string{topic}, Format: format.JSON[string](), Start: StartLatest, Bounded: true})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		src  connector.Source[string]
		want []string
	}{
		{"earliest", stringSource(t, SourceOptions[string]{Topics: []string{topic}, Bounded: true}), []string{"new1", "new2", "old1", "old2"}},
		{"latest", latest, nil},
		{"timestamp", stringSource(t, SourceOptions[string]{Topics: []string{topic}, Bounded: true, Start: StartTimestamp, StartTime: mid}), []string{"new1", "new2"}},
	}
	// Group offsets: commit offset 1 for partition 0 through a source with
	// CommitOffsets, then start a new source from them.
	committer := stringSource(t, SourceOptions[string]{Topics: []string{topic}, Group: group, CommitOffsets: true})
	r, err := committer.Open(t.Context(), connector.SubtaskInfo{Operator: "src", Parallelism: 1},
		encodePosition(map[tp]int64{{topic, 0}: 1, {topic, 1}: 0}))
	if err != nil {
		t.Fatal(err)
	}
	r.Position()
	r.Close() // waits for the commit
	cases = append(cases, struct {
		name string
		src  connector.Source[string]
		want []string
	}{"group", stringSource(t, SourceOptions[string]{Topics: []string{topic}, Bounded: true, Start: StartGroupOffsets, Group: group}),
		[]string{"new1", "new2", "old2"}})
	for _, c := range cases {
		if got := readAll(t, c.src, 2); !slices.Equal(got, c.want) {
			t.Errorf("%s: read %q, want %q", c.name, got, c.want)
		}
	}
}

func TestNewPartitionsAreDiscoveredAndReadFromTheirStart(t *testing.T) {
	topic := newTopic(t, 1)
	src := stringSource(t, SourceOptions[string]{Topics: []string{topic}, DiscoveryInterval: time.Millisecond})
	r, err := src.Open(t.Context(), connector.SubtaskInfo{Operator: "src", Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	resp, err := admin(t, brokers(t)).CreatePartitions(t.Context(), 2, topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	produce(t, topic, 3, []byte(`"p0"`), []byte(`"p1"`), []byte(`"p2"`))
	buf := make([]string, 10)
	var got []string
	for len(got) < 3 {
		n, err := r.Read(t.Context(), buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	slices.Sort(got)
	if want := []string{"p0", "p1", "p2"}; !slices.Equal(got, want) {
		t.Errorf("read %q, want %q", got, want)
	}
	if pos, _ := decodePosition(r.Position()); len(pos) != 3 {
		t.Errorf("position %v does not cover the 3 partitions", pos)
	}
}

func TestWatermarkFollowsTheSlowestPartition(t *testing.T) {
	topic := newTopic(t, 2)
	// Values are event times; partition 0 is far ahead of partition 1.
	produce(t, topic, 2, []byte(`"1000"`), []byte(`"10"`), []byte(`"2000"`), []byte(`"20"`))
	src := stringSource(t, SourceOptions[string]{Topics: []string{topic}, Bounded: true})
	r, err := src.Open(t.Context(), connector.SubtaskInfo{Operator: "src", Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	et := r.(connector.EventTimer[string])
	et.SetEventTime(func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n })
	if p := et.EventTimeProgress(); p != minTime {
		t.Errorf("before reading: progress %d, want unknown", p)
	}
	buf := make([]string, 10)
	for {
		if _, err := r.Read(t.Context(), buf); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if p := et.EventTimeProgress(); p != 20 {
		t.Errorf("progress %d, want 20: the slower partition's highest event time", p)
	}
}

func TestSourceOptionsAreChecked(t *testing.T) {
	js := format.JSON[string]()
	b := []string{"x"}
	cases := map[string]SourceOptions[string]{
		"Brokers is empty":          {Topics: []string{"t"}, Format: js},
		"Topics is empty":           {Brokers: b, Format: js},
		"Format is nil":             {Brokers: b, Topics: []string{"t"}},
		"needs StartTime":           {Brokers: b, Topics: []string{"t"}, Format: js, Start: StartTimestamp},
		"needs Group":               {Brokers: b, Topics: []string{"t"}, Format: js, Start: StartGroupOffsets},
		"needs OnMalformed":         {Brokers: b, Topics: []string{"t"}, Format: js, DeadLetterTopic: "dlq"},
		`bad topic "dlq"`:           {Brokers: b, Topics: []string{"dlq"}, Format: js, DeadLetterTopic: "dlq", OnMalformed: connector.Skip},
		"CommitOffsets needs Group": {Brokers: b, Topics: []string{"t"}, Format: js, CommitOffsets: true},
		"both Format and Decode":    {Brokers: b, Topics: []string{"t"}, Format: js, Decode: func(*kgo.Record, *string) error { return nil }},
	}
	for want, o := range cases {
		if _, err := Source(o); !errors.Is(err, ErrOption) || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want ErrOption saying %q", err, want)
		}
	}
}

func TestSourceWithUnreachableBrokerFailsOpenClearly(t *testing.T) {
	src, err := Source(SourceOptions[string]{Brokers: []string{"127.0.0.1:1"}, Topics: []string{"t"},
		Format: format.JSON[string](), ConnectTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Open(t.Context(), connector.SubtaskInfo{Operator: "src", Parallelism: 1}, nil)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("got %v, want ErrUnreachable naming the broker", err)
	}
}

// Decode sees whole records: a source can put their metadata into its
// values, and a Decode error is a malformed record like a Format's.
func TestDecodeReadsRecordMetadataAndItsErrorsAreMalformedRecords(t *testing.T) {
	topic := newTopic(t, 1)
	produce(t, topic, 1, []byte("a"), []byte("b"), []byte("bad"))
	src, err := Source(SourceOptions[string]{Brokers: brokers(t), Topics: []string{topic}, Bounded: true,
		Decode: func(rec *kgo.Record, v *string) error {
			if *v != "" {
				return errors.New("handed a used value")
			}
			if string(rec.Value) == "bad" {
				return errors.New("bad value")
			}
			*v = fmt.Sprintf("%s@%s/%d/%d", rec.Value, rec.Topic, rec.Partition, rec.Offset)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := src.Open(t.Context(), connector.SubtaskInfo{Operator: "src", Parallelism: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]string, 10)
	var got []string
	for {
		n, err := r.Read(t.Context(), buf)
		got = append(got, buf[:n]...)
		if err != nil {
			var merr *connector.MalformedError
			if !errors.As(err, &merr) || merr.Where != fmt.Sprintf("topic %s partition 0 offset 2", topic) {
				t.Fatalf("got %v, want a MalformedError at offset 2", err)
			}
			break
		}
	}
	want := []string{"a@" + topic + "/0/0", "b@" + topic + "/0/1"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// Records the broker deleted before a bounded reader read them (retention,
// here DeleteRecords) are skipped, as the client skips them in any
// consumption: a reader restored at an offset below the log start reads
// what is left, and one whose records up to the end were all deleted
// ends instead of waiting for them forever.
func TestABoundedReaderSkipsRecordsDeletedBeforeItReadThem(t *testing.T) {
	topic := newTopic(t, 1)
	vals, _ := jsonValues(6, func(i int) string { return fmt.Sprintf("v%d", i) })
	produce(t, topic, 1, vals...)
	adm := admin(t, brokers(t))
	deleteBefore := func(off int64) {
		t.Helper()
		o := kadm.Offsets{}
		o.AddOffset(topic, 0, off, -1)
		resp, err := adm.DeleteRecords(t.Context(), o)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatalf("deleting the records of %s before offset %d: %v", topic, off, err)
		}
	}
	src := stringSource(t, SourceOptions[string]{Topics: []string{topic}, Bounded: true})
	restored := encodePosition(map[tp]int64{{topic, 0}: 1})
	read := func() []string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		r, err := src.Open(ctx, connector.SubtaskInfo{Operator: "src", Parallelism: 1}, restored)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var got []string
		buf := make([]string, 10)
		for {
			n, err := r.Read(ctx, buf)
			got = append(got, buf[:n]...)
			if errors.Is(err, io.EOF) {
				return got
			}
			if err != nil {
				t.Fatalf("reading %s from offset 1 (read %q so far): %v", topic, got, err)
			}
		}
	}

	deleteBefore(4)
	if got := read(); !slices.Equal(got, []string{"v4", "v5"}) {
		t.Errorf("with offsets 0-3 deleted, a reader restored at offset 1 read %q, want [v4 v5]", got)
	}
	deleteBefore(6)
	if got := read(); len(got) != 0 {
		t.Errorf("with every record deleted, a reader restored at offset 1 read %q, want none", got)
	}
}
