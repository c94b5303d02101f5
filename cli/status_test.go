package cli_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli/internal/web"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/generator"
)

func TestStatusShowsAJob(t *testing.T) {
	p := weirapi.NewPipeline(weirapi.WithName("numbers"), weirapi.WithGuarantee(weirapi.ExactlyOnce),
		weirapi.WithFailover(weirapi.FineGrainedFailover), weirapi.WithActiveStandby(),
		weirapi.WithCheckpoints(weirapi.CheckpointConfig{Interval: 5 * time.Millisecond}))
	src := weirapi.FromSource(p, "gen", generator.Sequence(0, 20000))
	weirapi.To(weirapi.Filter(src, func(v int64) bool { return v%2 == 0 }), "out", discardSink{})
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.NewServer(p))
	defer srv.Close()
	code, stdout, stderr := weir(t, "status", "--http", srv.URL)
	if code != 0 || !strings.Contains(stdout, "numbers") || !strings.Contains(stdout, "finished") ||
		!strings.Contains(stdout, "fine-grained failover, active standby") {
		t.Fatalf("list: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = weir(t, "status", "--http", srv.URL, "numbers")
	if code != 0 || !strings.Contains(stdout, "in 20000") || !strings.Contains(stdout, "checkpoint") {
		t.Fatalf("job: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = weir(t, "status", "--http", srv.URL, "nope")
	if code == 0 || !strings.Contains(stderr, "no job named") {
		t.Fatalf("unknown job: exit %d %s", code, stderr)
	}
}

// discardSink drops records; idempotent, so exactly-once accepts it.
type discardSink struct{}

func (discardSink) Open(context.Context, connector.SubtaskInfo) (connector.Writer[int64], error) {
	return discardSink{}, nil
}
func (discardSink) Write(context.Context, []int64) error { return nil }
func (discardSink) Flush(context.Context) error          { return nil }
func (discardSink) Close() error                         { return nil }
func (discardSink) Idempotent() bool                     { return true }
