package nats_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	nc "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
	"github.com/weir-stream/weir/connectors/format"
	"github.com/weir-stream/weir/connectors/nats"
	"github.com/weir-stream/weir/internal/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type event struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

func events(n int) []event {
	out := make([]event, n)
	for i := range out {
		out[i] = event{ID: int64(i), Name: fmt.Sprintf("e%d", i%13)}
	}
	return out
}

var streams atomic.Int64

// server connects to the test server and returns its URL and a JetStream
// context.
func server(t *testing.T) (string, jetstream.JetStream) {
	t.Helper()
	url := testenv.Require(t, "WEIR_NATS_URL")
	conn, err := nc.Connect(url)
	if err != nil {
		t.Fatalf("connecting to the test server: %v", err)
	}
	t.Cleanup(conn.Close)
	js, err := jetstream.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	return url, js
}

// newStream creates a fresh stream capturing NAME.> and returns NAME.
func newStream(t *testing.T, js jetstream.JetStream) string {
	t.Helper()
	name := fmt.Sprintf("T%d_%d", time.Now().UnixNano()%1e9, streams.Add(1))
	_, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { js.DeleteStream(context.Background(), name) })
	return name
}

// publish publishes payloads to NAME.p<i%parts>.
func publish(t *testing.T, js jetstream.JetStream, name string, parts int, payloads [][]byte) {
	t.Helper()
	for i, p := range payloads {
		if _, err := js.Publish(t.Context(), fmt.Sprintf("%s.p%d", name, i%parts), p); err != nil {
			t.Fatal(err)
		}
	}
}

func partitions(name string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s.p%d", name, i))
	}
	return out
}

func jsonPayloads(t *testing.T, evs []event) [][]byte {
	f := format.JSON[event]()
	var out [][]byte
	for _, e := range evs {
		b, err := f.Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// readStream returns every message payload of a stream, decoded.
func readStream(t *testing.T, js jetstream.JetStream, name string) []event {
	t.Helper()
	st, err := js.Stream(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []event
	f := format.JSON[event]()
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(t.Context(), seq)
		if err != nil {
			t.Fatalf("reading %s sequence %d: %v", name, seq, err)
		}
		var e event
		if err := f.Decode(m.Data, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func TestSourceConformance(t *testing.T) {
	url, js := server(t)
	want := events(300)
	name := newStream(t, js)
	publish(t, js, name, 4, jsonPayloads(t, want))
	connectortest.TestSource(t, connectortest.SourceCase[event]{
		New: func(t *testing.T) connector.Source[event] {
			s, err := nats.NewSource(nats.SourceOptions[event]{ConnOptions: nats.ConnOptions{URL: url},
				Stream: name, Partitions: partitions(name, 4), Format: format.JSON[event](), Bounded: true})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Want:         want,
		Parallelism:  []int{1, 2, 3},
		BadPositions: []connector.Position{{0x80}, {0x00}},
	})
}

type streamSink struct {
	*nats.Sink[event]
	stream string
}

func TestSinkConformance(t *testing.T) {
	url, js := server(t)
	connectortest.TestSink(t, connectortest.SinkCase[event]{
		New: func(t *testing.T) connector.Sink[event] {
			name := newStream(t, js)
			s, err := nats.NewSink(nats.SinkOptions[event]{ConnOptions: nats.ConnOptions{URL: url},
				Subject: name + ".out", Format: format.JSON[event]()})
			if err != nil {
				t.Fatal(err)
			}
			return streamSink{s, name}
		},
		ReadBack: func(t *testing.T, s connector.Sink[event]) []event { return readStream(t, js, s.(streamSink).stream) },
		Records:  events(300),
	})
}

// The sink's two-phase commit: nothing is published before Commit, a
// repeated Commit (also by a later attempt's Recover) publishes nothing
// again, and a fresh run starting checkpoint ids over still publishes.
func TestSinkCommitsWithCheckpoints(t *testing.T) {
	url, js := server(t)
	ctx := t.Context()
	name := newStream(t, js)
	s, err := nats.NewSink(nats.SinkOptions[event]{ConnOptions: nats.ConnOptions{URL: url},
		Subject: name + ".out", Format: format.JSON[event](), JobID: name})
	must(t, err)
	open := func() (connector.Writer[event], connector.Committer) {
		w, err := s.Open(ctx, connector.SubtaskInfo{Operator: "out", Parallelism: 1})
		must(t, err)
		return w, w.(connector.Committer)
	}
	ev := events(10)
	w, c := open()
	must(t, c.Recover(ctx, 0, nil))
	must(t, w.Write(ctx, ev[:3]))
	must(t, w.Flush(ctx))
	t1, err := c.PreCommit(ctx, 1)
	must(t, err)
	must(t, w.Write(ctx, ev[3:5]))
	t2, err := c.PreCommit(ctx, 2)
	must(t, err)
	must(t, w.Write(ctx, ev[5:6])) // after the last barrier: never published
	if got := readStream(t, js, name); len(got) != 0 {
		t.Fatalf("published before commit: %v", got)
	}
	must(t, c.Commit(ctx, t1))
	must(t, c.Commit(ctx, t1))
	if got := readStream(t, js, name); !slices.Equal(got, ev[:3]) {
		t.Fatalf("after committing checkpoint 1 twice: %v", got)
	}
	must(t, w.Close())
	// The process died before committing checkpoint 2: the next attempt
	// restores it and commits both transactions again.
	w, c = open()
	must(t, c.Recover(ctx, 2, [][]byte{t1, t2}))
	must(t, w.Write(ctx, ev[5:7]))
	t3, err := c.PreCommit(ctx, 3)
	must(t, err)
	must(t, c.Commit(ctx, t3))
	must(t, w.Close())
	if got := readStream(t, js, name); !slices.Equal(got, ev[:7]) {
		t.Fatalf("after restoring checkpoint 2: %v, want %v", got, ev[:7])
	}
	// A fresh run (checkpoint ids from 1 again).
	w, c = open()
	must(t, c.Recover(ctx, 0, nil))
	must(t, w.Write(ctx, ev[7:10]))
	t1b, err := c.PreCommit(ctx, 1)
	must(t, err)
	must(t, c.Commit(ctx, t1b))
	must(t, w.Close())
	if got := readStream(t, js, name); !slices.Equal(got, ev) {
		t.Fatalf("after a fresh run: %v, want %v", got, ev)
	}
}

// A payload that does not decode: the fail policy stops naming the stream,
// sequence and subject and does not move past it; the skip policy drops
// and counts it and dead-letters it with where it came from.
func TestMalformedMessages(t *testing.T) {
	url, js := server(t)
	name := newStream(t, js)
	good := events(6)
	payloads := jsonPayloads(t, good)
	payloads = slices.Insert(payloads, 4, []byte("{not json"))
	publish(t, js, name, 1, payloads) // the bad one is sequence 5
	src := func(opts nats.SourceOptions[event]) connector.Reader[event] {
		opts.ConnOptions = nats.ConnOptions{URL: url}
		opts.Stream, opts.Format, opts.Bounded = name, format.JSON[event](), true
		s, err := nats.NewSource(opts)
		must(t, err)
		r, err := s.Open(t.Context(), connector.SubtaskInfo{Operator: "in", Parallelism: 1}, nil)
		must(t, err)
		t.Cleanup(func() { r.Close() })
		return r
	}

	r := src(nats.SourceOptions[event]{})
	got, err := readAll(t, r)
	var merr *connector.MalformedError
	if !errors.As(err, &merr) || !strings.Contains(err.Error(), fmt.Sprintf("stream %s sequence 5 (subject %s.p0)", name, name)) {
		t.Fatalf("fail policy: got %v, want a MalformedError naming stream %s sequence 5", err, name)
	}
	if !slices.Equal(got, good[:4]) {
		t.Fatalf("fail policy: read %v before the bad message, want %v", got, good[:4])
	}
	if pos := r.Position(); !slices.Equal(pos, []byte{5}) {
		t.Fatalf("fail policy: position %v, want sequence 5 (the bad message, not consumed)", pos)
	}

	dlq := newStream(t, js)
	var skipped []connector.MalformedError
	r = src(nats.SourceOptions[event]{OnMalformed: connector.Skip, DeadLetter: dlq + ".dead",
		Malformed: func(e connector.MalformedError) { skipped = append(skipped, e) }})
	got, err = readAll(t, r)
	must(t, err)
	if !slices.Equal(got, good) || len(skipped) != 1 {
		t.Fatalf("skip policy: read %v and skipped %d, want %v and 1", got, len(skipped), good)
	}
	st, err := js.Stream(t.Context(), dlq)
	must(t, err)
	m, err := st.GetMsg(t.Context(), 1)
	must(t, err)
	if string(m.Data) != "{not json" || m.Header.Get("Weir-Sequence") != "5" || m.Header.Get("Weir-Stream") != name ||
		!strings.Contains(m.Header.Get("Weir-Error"), "json") {
		t.Fatalf("dead letter: %q with headers %v", m.Data, m.Header)
	}
}

// Subtasks at parallelism 2 that read different amounts, rescaled to 3
// and then to 1, read every message of their partitions once, each
// reader in stream order.
func TestRescaledSourceReadsEveryMessageOnce(t *testing.T) {
	url, js := server(t)
	want := events(300)
	name := newStream(t, js)
	publish(t, js, name, 5, jsonPayloads(t, want))
	src, err := nats.NewSource(nats.SourceOptions[event]{ConnOptions: nats.ConnOptions{URL: url},
		Stream: name, Partitions: partitions(name, 5), Format: format.JSON[event](), Bounded: true})
	must(t, err)
	seen := map[int64]int{}
	// read reads up to limit events (all, if limit < 0) of subtask i of n
	// from pos and returns the position after them.
	read := func(i, n int, pos connector.Position, limit int) connector.Position {
		r, err := src.Open(t.Context(), connector.SubtaskInfo{Operator: "in", Subtask: i, Parallelism: n}, pos)
		must(t, err)
		defer r.Close()
		buf := make([]event, 1)
		last := int64(-1)
		for got := 0; limit < 0 || got < limit; got++ {
			k, err := r.Read(t.Context(), buf)
			if err == io.EOF {
				break
			}
			must(t, err)
			if k == 0 {
				got--
				continue
			}
			if buf[0].ID < last {
				t.Errorf("subtask %d of %d read event %d after %d", i, n, buf[0].ID, last)
			}
			last = buf[0].ID
			seen[buf[0].ID]++
		}
		return r.Position()
	}
	pos := []connector.Position{read(0, 2, nil, 20), read(1, 2, nil, 45)}
	pos, err = src.Rescale(pos, 3)
	must(t, err)
	for i := range pos {
		pos[i] = read(i, 3, pos[i], 10*i+5)
	}
	pos, err = src.Rescale(pos, 1)
	must(t, err)
	read(0, 1, pos[0], -1)
	for _, e := range want {
		if seen[e.ID] != 1 {
			t.Errorf("event %d read %d times", e.ID, seen[e.ID])
		}
	}
}

func readAll(t *testing.T, r connector.Reader[event]) ([]event, error) {
	var out []event
	buf := make([]event, 3)
	for {
		n, err := r.Read(t.Context(), buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func TestUnreachableServerRetriesThenFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	ln.Close()
	var waits []time.Duration
	s, err := nats.NewSink(nats.SinkOptions[event]{ConnOptions: nats.ConnOptions{URL: "nats://" + addr, ConnectTimeout: time.Second,
		OnRetry: func(_ int, _ error, w time.Duration) { waits = append(waits, w) }},
		Subject: "x", Format: format.JSON[event]()})
	must(t, err)
	_, err = s.Open(t.Context(), connector.SubtaskInfo{Operator: "out", Parallelism: 1})
	if err == nil || !strings.Contains(err.Error(), "cannot reach nats://"+addr) || !strings.Contains(err.Error(), "attempts") {
		t.Fatalf("Open against a closed port: %v", err)
	}
	if len(waits) < 2 || waits[1] <= waits[0] {
		t.Fatalf("want at least two retries with growing waits, got %v", waits)
	}
}

func TestOptionsNameWhatIsWrong(t *testing.T) {
	url, _ := server(t)
	s, err := nats.NewSource(nats.SourceOptions[event]{ConnOptions: nats.ConnOptions{URL: url}, Stream: "NO_SUCH_STREAM", Format: format.JSON[event]()})
	must(t, err)
	_, err = s.Open(t.Context(), connector.SubtaskInfo{Parallelism: 1}, nil)
	if err == nil || !strings.Contains(err.Error(), "stream NO_SUCH_STREAM does not exist") {
		t.Fatalf("missing stream: %v", err)
	}
	k, err := nats.NewSink(nats.SinkOptions[event]{ConnOptions: nats.ConnOptions{URL: url}, Subject: "nobody.listens", Format: format.JSON[event]()})
	must(t, err)
	_, err = k.Open(t.Context(), connector.SubtaskInfo{Parallelism: 1})
	if err == nil || !strings.Contains(err.Error(), "no stream captures subject nobody.listens") {
		t.Fatalf("uncaptured subject: %v", err)
	}
	if _, err := nats.NewSource(nats.SourceOptions[event]{ConnOptions: nats.ConnOptions{URL: url}, Stream: "S"}); err == nil || !strings.Contains(err.Error(), "needs a format") {
		t.Fatalf("no format: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
