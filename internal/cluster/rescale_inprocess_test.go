package cluster_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/weir-stream/weir/internal/cluster"
	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/engine"
)

// A coordinator and workers in this process (so the race detector sees
// them): a job submitted with --parallelism auto starts at the two free
// slots, rescales its counting task to three live when a third worker
// joins, and is rescaled back to two, every task, by the Rescale call,
// which restarts it and pins it there. Its output equals a one-process
// run's, and its report lists both rescales.
func TestRescaleInProcess(t *testing.T) {
	ip := startInProcess(t, keycountProgram{parallelism: 2, rate: 100_000}, cluster.CoordinatorConfig{
		HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Second, AutoRescaleDelay: 100 * time.Millisecond}, 2)
	ctx, client, logs := ip.ctx, ip.client, ip.logs
	out := filepath.Join(ip.dir, "out")
	info, err := client.Submit(ctx, &pb.SubmitRequest{Job: "keycount", Args: []string{out, "--parallelism", "auto"}})
	if err != nil {
		t.Fatal(err)
	}
	logs.wait(t, "^job "+info.Id+": parallelism auto: 2 \\(2 slots free\\)$")
	logs.wait(t, "^"+info.Id+": checkpoint 2 completed")
	ip.addWorker()
	up := logs.waitMatch(t, "^job "+info.Id+`: rescaled task "count -> format -> output" from parallelism 2 to 3 live at checkpoint (\d+)`)[1]
	next, err := strconv.Atoi(up)
	if err != nil {
		t.Fatal(err)
	}
	logs.wait(t, fmt.Sprintf("^%s: checkpoint %d completed", info.Id, next+1)) // the first of the new plan

	r, err := client.Rescale(ctx, &pb.RescaleRequest{Id: info.Id, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.From != 3 || r.To != 2 || r.Checkpoint == 0 {
		t.Fatalf("the rescale answered %v, want from 3 to 2 at a checkpoint", r)
	}
	logs.wait(t, fmt.Sprintf("^%s: restoring checkpoint %d$", info.Id, r.Checkpoint))
	final := awaitFinished(t, ctx, client, logs, info.Id)
	if n := logs.count("^job " + info.Id + ": rescaling"); n != 2 {
		t.Fatalf("the job was rescaled %d times, want 2: the Rescale call pins a job of parallelism auto", n)
	}
	sameOutput(t, out, ip.ref)
	var rep engine.Report
	if err := json.Unmarshal(final.Report, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rescales) != 2 || rep.Rescales[0].From != 2 || rep.Rescales[0].To != 3 || rep.Rescales[1].Checkpoint != r.Checkpoint || rep.Restored != r.Checkpoint {
		t.Fatalf("the job's report lists rescales %+v and restored checkpoint %d, want 2 -> 3 and 3 -> 2 at checkpoint %d, restored", rep.Rescales, rep.Restored, r.Checkpoint)
	}
}
