package tables

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	nc "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
	"github.com/weir-stream/weir/internal/testenv"
)

// Rows written to a nats table exactly-once arrive on its subject once
// each, as JSON objects named by the table's columns.
func TestNatsTablePublishesEachRowOnceThroughAServer(t *testing.T) {
	url := testenv.Require(t, "WEIR_NATS_URL")
	conn, err := nc.Connect(url)
	if err != nil {
		t.Fatalf("connecting to the test server: %v", err)
	}
	defer conn.Close()
	js, err := jetstream.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	stream := fmt.Sprintf("SQL%d", time.Now().UnixNano()%1e9)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{stream + ".>"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	defer js.DeleteStream(context.Background(), stream)
	tb := Table{Name: "out", Options: map[string]string{"connector": "nats", "url": url, "subject": stream + ".rows", "format": "json"},
		Columns: []Column{{Path: []string{"id"}, Type: types.BigIntType}, {Path: []string{"name"}, Type: types.VarcharType}}}
	sink, err := NewSink(tb, false)
	if err != nil {
		t.Fatal(err)
	}
	var rows []row.Row
	var want []string
	for i := range 50 {
		rows = append(rows, row.New(row.BigInt(int64(i)), row.String(fmt.Sprintf("n%d", i))))
		want = append(want, fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i))
	}
	p := weir.NewPipeline(weir.WithParallelism(2), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}))
	weir.To(weir.FromSource(p, "rows", collection.Of(rows...)), "out", sink)
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < len(want) {
		msg, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
		if err != nil {
			t.Fatalf("after %d messages: %v", len(got), err)
		}
		var obj map[string]any
		if err := json.Unmarshal(msg.Data(), &obj); err != nil {
			t.Fatalf("message %q: %v", msg.Data(), err)
		}
		got = append(got, string(msg.Data()))
	}
	info, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	if n := info.CachedInfo().State.Msgs; n != uint64(len(want)) {
		t.Fatalf("the stream holds %d messages, want %d", n, len(want))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
