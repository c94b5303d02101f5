package connector_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/collection"
)

// A throttled source gives its records, all of them, no faster than its
// rate (on synctest's fake clock), and a rate of 0 leaves the source as
// it is.
func TestThrottleHoldsASourceToItsRate(t *testing.T) {
	items := make([]int, 1000)
	for i := range items {
		items[i] = i
	}
	src := collection.Of(items...)
	if connector.Throttle(src, 0) != src {
		t.Fatal("a rate of 0 wrapped the source")
	}
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		r, err := connector.Throttle(src, 100).Open(ctx, connector.SubtaskInfo{Operator: "t", Parallelism: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		start := time.Now()
		buf := make([]int, 64)
		var got []int
		for {
			n, err := r.Read(ctx, buf)
			got = append(got, buf[:n]...)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != len(items) || got[999] != 999 {
			t.Fatalf("read %d records, want %d", len(got), len(items))
		}
		if took := time.Since(start); took < 9*time.Second {
			t.Fatalf("1000 records at 100/s took %v of fake time, want about 10s", took)
		}
	})
}
