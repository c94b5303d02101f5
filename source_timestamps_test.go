package weir_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/collection"
)

// A source asked for its connector's timestamps whose reader has none
// fails the job at start, without restarts, naming the source.
func TestWithSourceTimestampsNeedsAReaderWithTimestamps(t *testing.T) {
	p := weir.NewPipeline(weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}))
	in := weir.FromSource(p, "plain", collection.Of(1, 2, 3), weir.WithSourceTimestamps(time.Second))
	weir.To(in, "out", collection.NewSink[int]())
	err := p.Run(t.Context())
	if !errors.Is(err, connector.ErrConfig) || !strings.Contains(err.Error(), `"plain"`) || !strings.Contains(err.Error(), "Timestamper") {
		t.Fatalf("got %v, want a configuration error naming the source and connector.Timestamper", err)
	}
	if n := len(p.Report().Recoveries); n != 0 {
		t.Errorf("the job restarted %d times", n)
	}
}
