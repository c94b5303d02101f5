package nats

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	nc "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/format"
	"github.com/weir-stream/weir/internal/testenv"
)

// jetStream connects to the test server and returns its URL and a
// JetStream context, closed when the test ends.
func jetStream(t *testing.T) (string, jetstream.JetStream) {
	t.Helper()
	url := testenv.Require(t, "WEIR_NATS_URL")
	conn, err := nc.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	js, err := jetstream.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	return url, js
}

// memoryStream creates a stream in memory whose name and subject start
// with prefix, deleted when the test ends, and returns its name.
func memoryStream(t *testing.T, js jetstream.JetStream, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()%1e9)
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: name, Subjects: []string{name}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { js.DeleteStream(context.Background(), name) })
	return name
}

// A commit interrupted half-way (the process died after publishing the
// first messages of a checkpoint and before recording its marker) is
// published again by the next attempt's Recover; the stream drops the
// messages it already has by their ids, so each appears once.
func TestInterruptedCommitIsDeduplicated(t *testing.T) {
	url, js := jetStream(t)
	ctx := t.Context()
	name := memoryStream(t, js, "HALF")
	s, err := NewSink(SinkOptions[int]{ConnOptions: ConnOptions{URL: url}, Subject: name, Format: format.JSON[int](), JobID: name})
	if err != nil {
		t.Fatal(err)
	}
	open := func() (connector.Writer[int], connector.Committer) {
		w, err := s.Open(ctx, connector.SubtaskInfo{Operator: "out", Parallelism: 1})
		if err != nil {
			t.Fatal(err)
		}
		return w, w.(connector.Committer)
	}
	w, c := open()
	if err := c.Recover(ctx, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(ctx, []int{10, 11, 12, 13, 14}); err != nil {
		t.Fatal(err)
	}
	txn, err := c.PreCommit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	// What a commit that died after two messages left behind.
	run, ck, msgs, err := parseTxn(txn)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs[:2] {
		id := fmt.Sprintf("%s/0/%s/%d/%d", name, run, ck, i)
		if _, err := js.PublishMsg(ctx, &nc.Msg{Subject: m.subject, Data: m.data}, jetstream.WithMsgID(id)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	w, c = open()
	if err := c.Recover(ctx, 1, [][]byte{txn}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := strconv.Atoi(string(m.Data))
		got = append(got, v)
	}
	if fmt.Sprint(got) != "[10 11 12 13 14]" {
		t.Fatalf("stream holds %v, want [10 11 12 13 14] once each", got)
	}
}

// A job that starts afresh at parallelism 2 deletes the commit markers an
// earlier run of the same job left at a higher parallelism (subtask 3's,
// at checkpoint 40), so that a later rescale up does not take them for
// its own and skip its commits up to checkpoint 40; markers of other jobs
// stay.
func TestAFreshStartDropsMarkersOfSubtasksBeyondItsParallelism(t *testing.T) {
	url, js := jetStream(t)
	ctx := t.Context()
	name := memoryStream(t, js, "STALE")
	bucket := name + "_markers"
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, History: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer js.DeleteKeyValue(context.Background(), bucket)
	for _, k := range []string{name + ".3", name + ".1", name + "x.3"} {
		if _, err := kv.Put(ctx, k, []byte("40")); err != nil {
			t.Fatal(err)
		}
	}
	s, err := NewSink(SinkOptions[int]{ConnOptions: ConnOptions{URL: url}, Subject: name, Format: format.JSON[int](), JobID: name, MarkerBucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		w, err := s.Open(ctx, connector.SubtaskInfo{Operator: "out", Subtask: i, Parallelism: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.(connector.Committer).Recover(ctx, 0, nil); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	if _, err := kv.Get(ctx, name+".3"); err == nil {
		t.Fatal("subtask 3's marker of the earlier run is still there")
	}
	for k, want := range map[string]string{name + ".0": "0", name + ".1": "0", name + "x.3": "40"} {
		e, err := kv.Get(ctx, k)
		if err != nil || string(e.Value()) != want {
			t.Fatalf("marker %s: %v, want %s", k, err, want)
		}
	}
}
