package weirtest_test

import (
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/weirtest"
)

// The savepoint oracle: each job runs with failures injected, stops with
// a savepoint once some output is committed, and a run restored from the
// savepoint at another parallelism (1, 3 or 8; failures injected again)
// finishes it; the output is the failure-free run's, exactly once.

var restoreAt = []int{1, 3, 8}

func checkSavepoints(t *testing.T, res weirtest.Result, seeds int) {
	t.Helper()
	if res.Stopped != seeds || res.Injected == 0 {
		t.Fatalf("%d of %d runs stopped with a savepoint, %d failures injected: the oracle proved nothing", res.Stopped, seeds, res.Injected)
	}
	report(t, res)
}

// longWindowJob is windowJob over more events, so that a stop with a
// savepoint after its first window fired comes before its input ends.
func longWindowJob(p *weir.Pipeline, sink connector.Sink[windowCount]) {
	w := weir.WindowBy(weir.KeyBy(events(p, "events", 100_000, 1), func(e event) int64 { return e.Key }), weir.Tumbling(500*time.Millisecond))
	weir.To(weir.AggregateWindow(w, countAgg{}), "sink", sink)
}

func TestOracleSavepointsOfWindows(t *testing.T) {
	s := seeds(4)
	checkSavepoints(t, weirtest.CheckSavepoints(t, longWindowJob, weirtest.Options[windowCount]{Seeds: s}, restoreAt), len(s))
}

func TestOracleSavepointsOfAJoin(t *testing.T) {
	s := seeds(4)
	checkSavepoints(t, weirtest.CheckSavepoints(t, joinJob, weirtest.Options[pair]{Seeds: s}, restoreAt), len(s))
}

func TestOracleSavepointsOfDeduplicate(t *testing.T) {
	s := seeds(4)
	checkSavepoints(t, weirtest.CheckSavepoints(t, dedupJob, weirtest.Options[event]{Seeds: s}, restoreAt), len(s))
}
