package stdout

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
)

type msg struct {
	Sub  int    `json:"sub"`
	Seq  int    `json:"seq"`
	Text string `json:"text"`
}

// bufSink is a To sink with the buffer it writes to.
type bufSink struct {
	connector.Sink[msg]
	buf *checkedBuffer
}

// checkedBuffer is a bytes.Buffer that reports concurrent use, which the
// sink's lock must prevent.
type checkedBuffer struct {
	bytes.Buffer
	busy sync.Mutex
	t    *testing.T
}

func (b *checkedBuffer) Write(p []byte) (int, error) {
	if !b.busy.TryLock() {
		b.t.Error("concurrent Write to the underlying writer")
		return 0, nil
	}
	defer b.busy.Unlock()
	return b.Buffer.Write(p)
}

func decode(t *testing.T, b []byte) []msg {
	t.Helper()
	var out []msg
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m msg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestConformance(t *testing.T) {
	var records []msg
	for i := range 400 {
		records = append(records, msg{Sub: i % 7, Seq: i, Text: strings.Repeat("x", i%50) + "<&>"})
	}
	connectortest.TestSink(t, connectortest.SinkCase[msg]{
		New: func(t *testing.T) connector.Sink[msg] {
			b := &checkedBuffer{t: t}
			return bufSink{To[msg](b), b}
		},
		ReadBack: func(t *testing.T, s connector.Sink[msg]) []msg {
			return decode(t, s.(bufSink).buf.Bytes())
		},
		Records:     records,
		Parallelism: []int{1, 2, 4},
	})
}

// TestBatchesStayTogether checks that lines of concurrent subtasks never
// interleave and each batch is contiguous.
func TestBatchesStayTogether(t *testing.T) {
	ctx := context.Background()
	buf := &checkedBuffer{t: t}
	sink := To[msg](buf)
	const n, batches, size = 4, 50, 10
	var wg sync.WaitGroup
	for s := range n {
		wg.Go(func() {
			w, _ := sink.Open(ctx, connector.SubtaskInfo{Subtask: s, Parallelism: n})
			batch := make([]msg, size)
			for b := range batches {
				for i := range batch {
					batch[i] = msg{Sub: s, Seq: b*size + i, Text: strings.Repeat("y", 100)}
				}
				if err := w.Write(ctx, batch); err != nil {
					t.Error(err)
				}
			}
			w.Close()
		})
	}
	wg.Wait()
	got := decode(t, buf.Bytes())
	if len(got) != n*batches*size {
		t.Fatalf("got %d lines, want %d", len(got), n*batches*size)
	}
	next := make([]int, n)
	for i, m := range got {
		if m.Seq != next[m.Sub] {
			t.Fatalf("line %d: subtask %d record %d, want %d", i, m.Sub, m.Seq, next[m.Sub])
		}
		if m.Seq%size != 0 && got[i-1].Sub != m.Sub {
			t.Fatalf("line %d: batch of subtask %d interrupted", i, m.Sub)
		}
		next[m.Sub]++
	}
}

func TestEncodeError(t *testing.T) {
	w, _ := To[any](&bytes.Buffer{}).Open(context.Background(), connector.SubtaskInfo{Parallelism: 1})
	if err := w.Write(context.Background(), []any{make(chan int)}); err == nil || !strings.Contains(err.Error(), "stdout: encoding record") {
		t.Errorf("Write of a channel: %v", err)
	}
}
