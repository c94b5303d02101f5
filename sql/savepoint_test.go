package sql_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/sql"
)

// A SQL job stopped with a savepoint and restored from it at another
// parallelism writes, over both runs, the Go query's results: its state
// (windows, a window join, deduplicated rows) and its sources' positions
// move by operator name and key group as a Go job's do.
func TestASQLJobRestoresFromASavepointAtAnotherParallelism(t *testing.T) {
	const events = 20000
	for _, c := range []struct {
		q    string
		ties []string
	}{{q: "q5"}, {q: "q18", ties: []string{"auction", "bidder", "dateTime"}}} {
		out := t.TempDir()
		// The generator throttled, so that the job is stopped in the middle.
		text := strings.Replace(nexmarkScript(t, c.q, out), "'connector' = 'nexmark',", "'connector' = 'nexmark', 'rate' = '4000',", 1)
		run := func(p int, restore string, stop bool) *weir.Pipeline {
			s, err := sql.Parse(text, sql.Options{Vars: nexmarkVars(events)})
			if err != nil {
				t.Fatal(err)
			}
			started := make(chan struct{})
			opts := []weir.Option{weir.WithParallelism(p), weir.WithGuarantee(weir.ExactlyOnce),
				weir.WithCheckpoints(weir.CheckpointConfig{Interval: 50 * time.Millisecond}),
				weir.WithOnStart(func(weir.RunStart) error { close(started); return nil })}
			if restore != "" {
				opts = append(opts, weir.WithRestore(restore))
			}
			pl := weir.NewPipeline(opts...)
			if err := s.Build(pl); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- pl.Run(ctx) }()
			if stop {
				<-started
				sp, err := pl.StopWithSavepoint(ctx, t.TempDir())
				if err != nil {
					t.Fatalf("%s: savepoint: %v", c.q, err)
				}
				stopPath = sp.Path
			}
			if err := <-done; err != nil {
				t.Fatalf("%s at parallelism %d: %v", c.q, p, err)
			}
			return pl
		}
		first := run(2, "", true)
		if !first.Report().Stopped {
			t.Fatalf("%s: the first run was not stopped by its savepoint", c.q)
		}
		before, err := file.ReadLines(out)
		if err != nil {
			t.Fatal(err)
		}
		run(3, stopPath, false)
		rows, err := file.ReadLines(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) <= len(before) {
			t.Fatalf("%s: the restored run wrote nothing after the %d rows of the first: it had nothing left to do", c.q, len(before))
		}
		want := table(t, runGo(t, c.q, events), c.ties)
		sameTables(t, fmt.Sprintf("%s stopped at parallelism 2 and restored at 3", c.q), table(t, rows, c.ties), want)
	}
}

// stopPath is the savepoint of the run that stopped.
var stopPath string
