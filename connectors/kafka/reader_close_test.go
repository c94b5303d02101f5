package kafka

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weir-stream/weir/connector"
)

// TestReaderClosedWhileItsClientStillAssignsAPartition closes a bounded
// reader right after the Read that finished its first partition and asked
// its client for the second one. franz-go assigns a partition in a
// goroutine of its own, after the metadata update the request triggers; a
// Close that comes first must leave it nothing to assign. Otherwise the
// client assigns the partition after its Close stopped the consumer and
// starts a fetch session that races with Close ending the sessions (the
// race detector caught it in the conformance suite's chained rewind, which
// closes readers right after opening them).
//
// The overlap depends on timing; closeWatch makes it certain and visible.
// It holds the response to the fetch with which the client's Close ends
// the reader's fetch session until the client has read the metadata it
// asked for, so the update lands while Close runs, and it records every
// partition assignment the client logs after that fetch was sent.
func TestReaderClosedWhileItsClientStillAssignsAPartition(t *testing.T) {
	topic := newTopic(t, 2)
	vals, _ := jsonValues(4, func(i int) string { return "v" })
	produce(t, topic, 2, vals...) // two records in each partition
	info := connector.SubtaskInfo{Operator: "src", Parallelism: 1}
	const attempts = 5
	for attempt := 1; ; attempt++ {
		w := newCloseWatch()
		src := stringSource(t, SourceOptions[string]{Topics: []string{topic}, Bounded: true,
			ClientOptions: []kgo.Opt{kgo.WithHooks(w), kgo.WithLogger(w)}})
		r, err := src.Open(t.Context(), info, nil)
		if err != nil {
			t.Fatal(err)
		}
		// A bounded reader reads partition 0 first; the Read that returns
		// its last record asks the client for partition 1.
		buf := make([]string, 2)
		for got := 0; got < 2; {
			n, err := r.Read(t.Context(), buf[got:])
			if err != nil {
				r.Close()
				t.Fatalf("reading partition 0: %v", err)
			}
			got += n
		}
		w.closing.Store(true)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if late := w.lateAssignments(); len(late) > 0 {
			t.Fatalf("the client assigned partitions after its Close began: %v", late)
		}
		if w.overlapped() {
			return
		}
		if attempt == attempts {
			t.Fatalf("in %d attempts the client's Close never overlapped the metadata update: %s", attempts, w)
		}
	}
}

// closeWatch is a franz-go hook and logger. Once closing is set, the first
// fetch request the client writes is the one ending its fetch session, sent
// by its Close after it stopped consuming. closeWatch holds the response
// to it until the client reads a metadata response (or disconnects), and
// records the partition assignments logged from then on.
type closeWatch struct {
	closing    atomic.Bool
	endSent    atomic.Bool // the fetch ending the session was written
	held       atomic.Bool
	metaRead   atomic.Bool
	metaOnce   sync.Once
	meta       chan struct{}
	discOnce   sync.Once
	disconnect chan struct{}

	mu   sync.Mutex
	late []string
}

func newCloseWatch() *closeWatch {
	return &closeWatch{meta: make(chan struct{}), disconnect: make(chan struct{})}
}

func (w *closeWatch) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	if w.closing.Load() && kmsg.Key(key) == kmsg.Fetch {
		w.endSent.Store(true)
	}
}

func (w *closeWatch) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	if !w.endSent.Load() {
		return
	}
	switch kmsg.Key(key) {
	case kmsg.Metadata:
		w.metaRead.Store(true)
		w.metaOnce.Do(func() { close(w.meta) })
	case kmsg.Fetch:
		if w.held.CompareAndSwap(false, true) {
			select {
			case <-w.meta:
			case <-w.disconnect:
			}
		}
	}
}

func (w *closeWatch) OnBrokerDisconnect(kgo.BrokerMetadata, net.Conn) {
	w.discOnce.Do(func() { close(w.disconnect) })
}

func (w *closeWatch) Level() kgo.LogLevel { return kgo.LogLevelInfo }

func (w *closeWatch) Log(_ kgo.LogLevel, msg string, keyvals ...any) {
	if msg != "assigning partitions" || !w.endSent.Load() {
		return
	}
	line := strings.TrimSpace(fmt.Sprintln(keyvals...))
	if strings.Contains(line, "new assignments") {
		w.mu.Lock()
		w.late = append(w.late, line)
		w.mu.Unlock()
	}
}

func (w *closeWatch) lateAssignments() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.late
}

// overlapped reports whether the metadata update landed while Close held.
func (w *closeWatch) overlapped() bool { return w.held.Load() && w.metaRead.Load() }

func (w *closeWatch) String() string {
	return fmt.Sprintf("session-ending fetch sent: %v, its response held: %v, metadata read meanwhile: %v",
		w.endSent.Load(), w.held.Load(), w.metaRead.Load())
}
