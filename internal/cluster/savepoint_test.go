package cluster

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/blob"
	"github.com/weir-stream/weir/internal/cluster/pb"
	"github.com/weir-stream/weir/internal/dataflow"
	"github.com/weir-stream/weir/internal/engine"
	"github.com/weir-stream/weir/internal/store"
	"github.com/weir-stream/weir/internal/task"
)

// savepointing is a running pipeline whose savepoints answer res, err.
type savepointing struct {
	res         engine.SavepointResult
	err         error
	dir         string // the directory last asked for
	stop, drain bool   // what the last request asked for
}

func (*savepointing) Compile(context.Context) (engine.Config, error) { return engine.Config{}, nil }
func (*savepointing) Run(context.Context, engine.Deployer, store.Fence, *engine.Adoption) error {
	return nil
}
func (*savepointing) Report() *engine.Report { return nil }
func (p *savepointing) Savepoint(_ context.Context, dir string, stop, drain bool) (engine.SavepointResult, error) {
	p.dir, p.stop, p.drain = dir, stop, drain
	return p.res, p.err
}

// The Savepoint call refuses, each with its own code and message, an
// unknown job, a job that does not run, one without checkpoints and a
// request without a directory when the coordinator has no default; a
// running job answers where its savepoint went, under the coordinator's
// directory when the request names none.
func TestSavepointCallsRefuseWhatCannotTakeASavepoint(t *testing.T) {
	ctx := context.Background()
	c := &Coordinator{cfg: CoordinatorConfig{Log: func(string) {}}, jobs: map[string]*job{}}
	add := func(id, state string, p Pipeline) {
		c.jobs[id] = &job{c: c, id: id, p: p, rec: jobRecord{ID: id, State: state}}
	}
	running := &savepointing{res: engine.SavepointResult{Path: "/sp/savepoint-a-3-x", Checkpoint: 3}}
	add("running-1", Running, running)
	add("done-2", Finished, &savepointing{})
	add("none-3", Running, &savepointing{err: engine.ErrNoSavepoints})
	add("ended-4", Running, &savepointing{err: engine.ErrNotRunning})
	add("aborted-5", Running, &savepointing{err: errors.New("the savepoint's checkpoint 7 was aborted")})

	for _, tc := range []struct {
		id, dir string
		want    codes.Code
	}{
		{"nosuch-9", "/sp", codes.NotFound},
		{"running-1", "", codes.InvalidArgument},
		{"done-2", "/sp", codes.FailedPrecondition},
		{"none-3", "/sp", codes.FailedPrecondition},
		{"ended-4", "/sp", codes.FailedPrecondition},
		{"aborted-5", "/sp", codes.Aborted},
	} {
		_, err := c.Savepoint(ctx, &pb.SavepointRequest{Id: tc.id, Dir: tc.dir})
		if got := status.Code(err); got != tc.want {
			t.Errorf("savepoint of %s with dir %q: %v, want code %v", tc.id, tc.dir, err, tc.want)
		}
	}
	c.cfg.SavepointDir = "/default"
	info, err := c.Savepoint(ctx, &pb.SavepointRequest{Id: "running-1"})
	if err != nil || info.Path != "/sp/savepoint-a-3-x" || info.Checkpoint != 3 || running.dir != "/default" {
		t.Fatalf("savepoint of a running job: %v, %v (asked under %q), want its path, under the coordinator's directory", info, err, running.dir)
	}
}

// Before a job stops after a savepoint, the coordinator asks every share
// to answer once its sinks committed the savepoint's checkpoint, and
// waits for the answer.
func TestAwaitCompletedWaitsForEveryShareToAnswer(t *testing.T) {
	c := &Coordinator{cfg: CoordinatorConfig{Log: func(string) {}}, workers: map[string]*workerConn{}, executors: map[string]*remoteExecutor{}}
	w := &workerConn{c: c, id: "w1", dataAddr: "w1:0", slots: 1, used: 1, out: make(chan *pb.CoordinatorMessage, 64),
		lost: make(chan struct{}), metrics: map[string]*pb.AttemptMetrics{}}
	x := &remoteExecutor{c: c, job: &job{c: c, id: "j"}, key: "j/1.1", where: map[dataflow.SubtaskID]*share{}, halted: make(chan struct{})}
	x.restart.init()
	sh := &share{key: x.key, w: w, done: make(chan struct{}), live: true}
	x.shares = []*share{sh}

	done := make(chan error, 1)
	go func() { done <- x.AwaitCompleted(context.Background(), 5) }()
	cmd := (<-w.out).GetCommand()
	if cmd.GetKind() != pb.Command_AWAIT_COMPLETED || cmd.Checkpoint != 5 {
		t.Fatalf("the worker was sent %v, want AWAIT_COMPLETED of checkpoint 5", cmd)
	}
	select {
	case err := <-done:
		t.Fatalf("AwaitCompleted returned (%v) before the worker answered", err)
	default:
	}
	x.onMessage(w, &pb.WorkerMessage{Msg: &pb.WorkerMessage_Committed{Committed: &pb.Committed{Key: x.key, Token: cmd.Token}}})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A worker answers AWAIT_COMPLETED only once its runtime's sinks handled
// the checkpoint's completion, with the command's token.
func TestAWorkerAnswersAwaitCompletedOnceItsSinksCommitted(t *testing.T) {
	s := &agent{ctx: context.Background(), out: make(chan *pb.WorkerMessage, 4)}
	a := newWorkerAttempt(s, &pb.Deploy{Key: "j/1.1"}, 1)
	asked, commit := make(chan int64, 1), make(chan struct{})
	a.awaitCompleted(context.Background(), func(_ context.Context, id int64) error {
		asked <- id
		<-commit
		return nil
	}, &pb.Command{Key: "j/1.1", Kind: pb.Command_AWAIT_COMPLETED, Checkpoint: 7, Token: 3})
	if id := <-asked; id != 7 {
		t.Fatalf("the worker waited for checkpoint %d, want 7", id)
	}
	select {
	case m := <-s.out:
		t.Fatalf("the worker sent %v before its sinks committed", m)
	default:
	}
	close(commit)
	a.bg.Wait()
	if m := (<-s.out).GetCommitted(); m == nil || m.Token != 3 || m.Key != "j/1.1" {
		t.Fatalf("the worker answered %v, want Committed with token 3", m)
	}
}

// The Savepoint call hands its stop and drain to the job; a drain stops
// the job too. A drained checkpoint's TRIGGER carries drain to every
// worker, and the worker's runtime gets it (task.TriggerOptions).
func TestADrainReachesTheJobAndTheWorkersTrigger(t *testing.T) {
	ctx := context.Background()
	c := &Coordinator{cfg: CoordinatorConfig{Log: func(string) {}, SavepointDir: "/sp"}, jobs: map[string]*job{}}
	p := &savepointing{res: engine.SavepointResult{Path: "/sp/savepoint-a-3-x", Checkpoint: 3}}
	c.jobs["j"] = &job{c: c, id: "j", p: p, rec: jobRecord{ID: "j", State: Running}}
	for _, tc := range []struct {
		req                 *pb.SavepointRequest
		wantStop, wantDrain bool
	}{
		{&pb.SavepointRequest{Id: "j"}, false, false},
		{&pb.SavepointRequest{Id: "j", Stop: true}, true, false},
		{&pb.SavepointRequest{Id: "j", Stop: true, Drain: true}, true, true},
		{&pb.SavepointRequest{Id: "j", Drain: true}, true, true},
	} {
		if _, err := c.Savepoint(ctx, tc.req); err != nil || p.stop != tc.wantStop || p.drain != tc.wantDrain {
			t.Fatalf("request %v: %v; the job was asked stop %v drain %v, want %v %v", tc.req, err, p.stop, p.drain, tc.wantStop, tc.wantDrain)
		}
	}

	lead, err := store.Lead(ctx, blob.Memory(), "test")
	if err != nil {
		t.Fatal(err)
	}
	c.lead = lead
	w := &workerConn{c: c, id: "w1", out: make(chan *pb.CoordinatorMessage, 4), lost: make(chan struct{})}
	x := &remoteExecutor{c: c, job: &job{c: c, id: "j"}, key: "j/1.1", where: map[dataflow.SubtaskID]*share{}, halted: make(chan struct{})}
	x.shares = []*share{{key: x.key, w: w, done: make(chan struct{}), live: true}}
	for _, how := range []task.TriggerOptions{{}, {Aligned: true}, {Aligned: true, Drain: true}} {
		x.Trigger(5, how)
		cmd := (<-w.out).GetCommand()
		if cmd.GetKind() != pb.Command_TRIGGER || cmd.Aligned != how.Aligned || cmd.Drain != how.Drain {
			t.Fatalf("Trigger(5, %+v) sent %v", how, cmd)
		}
		if got := triggerOptions(cmd); got != how {
			t.Fatalf("the worker triggers %+v for %v, want %+v", got, cmd, how)
		}
	}
}
