package cluster_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/engine"
)

// A job of --parallelism auto grows live when a worker joins: its
// counting task takes the new slot while the job runs (its source keeps
// its parallelism), no attempt restarts, and the output equals a
// one-process run's.
func TestAnAutoJobGrowsLiveWhenAWorkerJoins(t *testing.T) {
	ip := startInProcess(t, keycountProgram{parallelism: 2, rate: 100_000}, cluster.CoordinatorConfig{
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second, AutoRescaleDelay: 50 * time.Millisecond}, 2)
	ctx, client, logs := ip.ctx, ip.client, ip.logs
	id, out := ip.submit("--parallelism", "auto")
	ip.addWorker()
	ck := logs.waitMatch(t, "^job "+id+`: rescaled task "count -> format -> output" from parallelism 2 to 3 live at checkpoint (\d+)`)[1]
	final := awaitFinished(t, ctx, client, logs, id)
	sameOutput(t, out, ip.ref)
	var rep engine.Report
	if err := json.Unmarshal(final.Report, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Recoveries) != 0 || rep.Restored != 0 {
		t.Fatalf("the job restarted (recoveries %+v, restored %d): growing live restarts nothing", rep.Recoveries, rep.Restored)
	}
	if len(rep.Rescales) != 1 || !rep.Rescales[0].Live || fmt.Sprint(rep.Rescales[0].Checkpoint) != ck || rep.Rescales[0].To != 3 ||
		!strings.HasPrefix(rep.Rescales[0].Cause, "workers joined") {
		t.Fatalf("the job's report lists rescales %+v, want one live to 3 at checkpoint %s, caused by the join", rep.Rescales, ck)
	}
}

// A job of --parallelism auto that cannot change parallelism while it
// runs (under fine-grained failover) grows by a restart at a checkpoint
// when a worker joins, and says why.
func TestAnAutoJobThatCannotGrowLiveRestarts(t *testing.T) {
	ip := startInProcess(t, keycountProgram{parallelism: 2, rate: 100_000}, cluster.CoordinatorConfig{
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second, AutoRescaleDelay: 50 * time.Millisecond}, 2)
	id, out := ip.submit("--parallelism", "auto", "--failover", "fine-grained")
	ip.addWorker()
	ip.logs.wait(t, "^job "+id+`: no live rescale to parallelism 3 \(.*cannot change parallelism while it runs: .*\): rescaling by a restart`)
	ip.logs.wait(t, "^job "+id+`: rescaled from parallelism 2 to 3, restoring checkpoint \d+`)
	awaitFinished(t, ip.ctx, ip.client, ip.logs, id)
	sameOutput(t, out, ip.ref)
}
