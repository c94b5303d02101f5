package checkpoint

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weir-stream/weir/internal/dataflow"
)

var (
	src  = dataflow.SubtaskID{Vertex: 0, Subtask: 0}
	sink = dataflow.SubtaskID{Vertex: 1, Subtask: 0}
)

func newTestCoordinator(t *testing.T, cfg Config) *Coordinator {
	t.Helper()
	if cfg.Tasks == nil {
		cfg.Tasks, cfg.Sources = []dataflow.SubtaskID{src, sink}, []dataflow.SubtaskID{src}
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 100
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustTrigger(t *testing.T, c *Coordinator) ID {
	t.Helper()
	acts, err := c.TriggerNow()
	if err != nil || len(acts) != 1 {
		t.Fatalf("TriggerNow() = %v, %v", acts, err)
	}
	return acts[0].(Trigger).ID
}

func TestNewRejectsBadConfigWithSentinel(t *testing.T) {
	_, err := New(Config{Tasks: []dataflow.SubtaskID{src}, Sources: []dataflow.SubtaskID{sink}, Timeout: 1})
	if !errors.Is(err, ErrBadConfig) {
		t.Fatalf("New with a source that is not a task: err = %v, want ErrBadConfig", err)
	}
}

func TestFailJobErrWrapsSentinel(t *testing.T) {
	c := newTestCoordinator(t, Config{TolerableFailures: 0})
	id := mustTrigger(t, c)
	acts := c.Decline(id, sink, "disk full")
	i := slices.IndexFunc(acts, func(a Action) bool { _, ok := a.(FailJob); return ok })
	if i < 0 {
		t.Fatalf("Decline with no tolerance = %v, want a FailJob", acts)
	}
	err := acts[i].(FailJob).Err()
	if !errors.Is(err, ErrTooManyFailures) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("FailJob.Err() = %v, want ErrTooManyFailures mentioning the cause", err)
	}
}

func TestShellMayKeepAndChangeWhatItIsGiven(t *testing.T) {
	tasks, sources := []dataflow.SubtaskID{src, sink}, []dataflow.SubtaskID{src}
	c := newTestCoordinator(t, Config{Tasks: tasks, Sources: sources})
	tasks[1] = dataflow.SubtaskID{Vertex: 9}
	sources[0] = dataflow.SubtaskID{Vertex: 9}

	acts, _ := c.TriggerNow()
	trig := acts[0].(Trigger)
	if !slices.Equal(trig.Sources, []dataflow.SubtaskID{src}) {
		t.Fatalf("Trigger.Sources = %v after the caller changed its slice, want [%v]", trig.Sources, src)
	}
	trig.Sources[0] = dataflow.SubtaskID{Vertex: 8}

	c.Ack(trig.ID, src, "a")
	_, acts = c.Ack(trig.ID, sink, "b")
	if len(acts) != 1 {
		t.Fatalf("last Ack = %v, want a Persist", acts)
	}
	persist := acts[0].(Persist)
	persist.Handles[sink] = "changed"
	// The coordinator still compares with its own copy: "b" is a retry.
	if res, acts := c.Ack(trig.ID, sink, "b"); res != AckDuplicate || len(acts) != 0 {
		t.Fatalf("retried Ack = %v %v, want duplicate and nothing to discard", res, acts)
	}
	c.Stored(trig.ID)
	acts, _ = c.TriggerNow()
	if got := acts[0].(Trigger).Sources; !slices.Equal(got, []dataflow.SubtaskID{src}) {
		t.Fatalf("next Trigger.Sources = %v, want [%v]", got, src)
	}
}

func TestStatsAndNextID(t *testing.T) {
	c := newTestCoordinator(t, Config{FirstID: 5})
	if got := c.NextID(); got != 5 {
		t.Fatalf("NextID() = %d, want 5", got)
	}
	id := mustTrigger(t, c)
	c.Tick()
	c.Ack(id, src, "a")
	if got, want := c.NextID(), ID(6); got != want {
		t.Fatalf("NextID() after a trigger = %d, want %d", got, want)
	}
	s, ok := c.Stats(id)
	want := Stats{ID: 5, Status: StatusPending, Manual: true, Acks: 1, Tasks: 2}
	if !ok || s != want {
		t.Fatalf("Stats(5) = %+v, %v; want %+v", s, ok, want)
	}
	c.Decline(id, sink, "no")
	s, ok = c.Stats(id)
	want = Stats{ID: 5, Status: StatusAborted, Manual: true, Finished: 1, Acks: 1, Tasks: 2,
		Reason: ReasonDeclined, Cause: "declined by 1.0: no"}
	if !ok || s != want {
		t.Fatalf("Stats(5) after Decline = %+v, %v; want %+v", s, ok, want)
	}
	if s, ok := c.Stats(4); ok {
		t.Fatalf("Stats(4) = %+v, want nothing: it was never triggered", s)
	}
}

// TestPackageIsPure keeps side effects out of the package: no clock, no
// I/O, no goroutines, no locks.
func TestPackageIsPure(t *testing.T) {
	forbidden := []string{"os", "net", "time", "sync", "io", "syscall", "unsafe", "math/rand"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		checked++
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %q", name, path)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if _, ok := n.(*ast.GoStmt); ok {
				t.Errorf("%s starts a goroutine", name)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no source files checked")
	}
}
