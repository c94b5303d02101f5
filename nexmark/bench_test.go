package nexmark

import (
	"testing"
	"time"
)

func reportEventsPerSec(b *testing.B, start time.Time) {
	if s := time.Since(start).Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "events/s")
	}
}

// BenchmarkEventAt measures generation of Beam's default event mix (2% people,
// 6% auctions, 92% bids) into a reused Event.
func BenchmarkEventAt(b *testing.B) {
	c := DefaultConfig()
	c.NumEvents = 0
	g := mustGenerator(b, c)
	var e Event
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		g.EventAt(int64(i), &e)
	}
	reportEventsPerSec(b, start)
}

// BenchmarkCursorNext is BenchmarkEventAt through a Cursor.
func BenchmarkCursorNext(b *testing.B) {
	c := DefaultConfig()
	c.NumEvents = 0
	cur := mustGenerator(b, c).Cursor(0)
	var e Event
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		cur.Next(&e)
	}
	reportEventsPerSec(b, start)
}

// BenchmarkEventAtJSON measures generating and encoding one JSON line per
// event.
func BenchmarkEventAtJSON(b *testing.B) {
	c := DefaultConfig()
	c.NumEvents = 0
	g := mustGenerator(b, c)
	var e Event
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var bytes int
	for i := 0; i < b.N; i++ {
		g.EventAt(int64(i), &e)
		buf = AppendJSONLine(buf[:0], &e)
		bytes += len(buf)
	}
	b.SetBytes(int64(bytes / max(b.N, 1)))
	reportEventsPerSec(b, start)
}

// BenchmarkAppendJSON measures encoding alone, over a fixed mix of events.
func BenchmarkAppendJSON(b *testing.B) {
	g := mustGenerator(b, DefaultConfig())
	events := make([]Event, 1000)
	for i := range events {
		g.EventAt(int64(i), &events[i])
	}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		buf = AppendJSON(buf[:0], &events[i%len(events)])
	}
	reportEventsPerSec(b, start)
}

// BenchmarkAppendExactString measures the random strings that make up
// most of an event's bytes (a bid's extra field), 100 characters each.
func BenchmarkAppendExactString(b *testing.B) {
	r := NewJavaRandom(1)
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendExactString(buf[:0], &r, 100)
	}
}
