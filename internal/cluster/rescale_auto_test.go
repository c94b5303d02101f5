package cluster_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
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
	out := filepath.Join(ip.dir, "out")
	info, err := client.Submit(ctx, &pb.SubmitRequest{Job: "keycount", Args: []string{out, "--parallelism", "auto"}})
	if err != nil {
		t.Fatal(err)
	}
	logs.wait(t, "^"+info.Id+": checkpoint 2 completed")
	ip.addWorker()
	ck := logs.waitMatch(t, "^job "+info.Id+`: rescaled task "count -> format -> output" from parallelism 2 to 3 live at checkpoint (\d+)`)[1]
	final := awaitFinished(t, ctx, client, logs, info.Id)
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
	ctx, client, logs := ip.ctx, ip.client, ip.logs
	out := filepath.Join(ip.dir, "out")
	info, err := client.Submit(ctx, &pb.SubmitRequest{Job: "keycount", Args: []string{out, "--parallelism", "auto", "--failover", "fine-grained"}})
	if err != nil {
		t.Fatal(err)
	}
	logs.wait(t, "^"+info.Id+": checkpoint 2 completed")
	ip.addWorker()
	logs.wait(t, "^job "+info.Id+`: no live rescale to parallelism 3 \(.*cannot change parallelism while it runs: .*\): rescaling by a restart`)
	logs.wait(t, "^job "+info.Id+`: rescaled from parallelism 2 to 3, restoring checkpoint \d+`)
	awaitFinished(t, ctx, client, logs, info.Id)
	sameOutput(t, out, ip.ref)
}
