package weir_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
	"github.com/weir-stream/weir/internal/state/lsm"
)

// ttlOp is the input of the time-to-live tests: at processing time At
// after the job started, put V for Key (in value and map state), or get
// what state holds for Key.
type ttlOp struct {
	At  time.Duration
	Key string
	Put bool
	V   int64
}

// paced returns a source emitting each op at its At on the (fake) clock.
func paced(ops []ttlOp) connector.Source[ttlOp] {
	timed := make([]connectortest.Timed[ttlOp], len(ops))
	for i, op := range ops {
		timed[i] = connectortest.Timed[ttlOp]{At: op.At, V: op}
	}
	return connectortest.Paced(timed)
}

// expiring keeps the ops' values in value state and, under the entry
// "e", in map state, both with the time-to-live opts give them, and
// emits what a get finds.
type expiring struct {
	opts  []weir.StateOption
	value *weir.ValueState[int64, string]
	m     *weir.MapState[string, int64, string]
}

func (f *expiring) Open(sc *weir.StateContext[string]) error {
	f.value = weir.NewValueState[int64](sc, "value", f.opts...)
	f.m = weir.NewMapState[string, int64](sc, "map", f.opts...)
	return nil
}

func (f *expiring) ProcessElement(ctx *weir.KeyedContext[string, string], op ttlOp) error {
	if op.Put {
		f.value.Update(op.V)
		f.m.Put("e", op.V)
		return nil
	}
	v, ok := f.value.Value()
	mv, mok := f.m.Get("e")
	got := "none"
	if ok {
		got = fmt.Sprint(v)
	}
	if ok != mok || v != mv || ok != (f.m.Len() == 1) {
		got = fmt.Sprintf("value %d %v, map %d %v len %d", v, ok, mv, mok, f.m.Len())
	}
	ctx.Emit(fmt.Sprintf("%v %s: %s", op.At, op.Key, got))
	return nil
}

// runExpiring runs ops through expiring with opts on a fake clock, its
// state in backend.
func runExpiring(t *testing.T, backend string, ops []ttlOp, opts ...weir.StateOption) []string {
	t.Helper()
	out := &sink[string]{}
	if backend == "pebble" {
		// The process's stores share an environment: made outside the
		// bubble, closed once the job closed its stores.
		if _, err := lsm.ProcessEnv(lsm.Config{Dir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(lsm.CloseProcessEnv)
	}
	synctest.Test(t, func(t *testing.T) {
		// The source waits minutes of fake time between ops: no stall.
		p := weir.NewPipeline(weir.WithStallTimeout(0, nil), weir.WithStateBackend(weir.StateBackend{Name: backend}))
		src := weir.FromSource(p, "ops", paced(ops))
		keyed := weir.KeyBy(src, func(o ttlOp) string { return o.Key })
		weir.To(weir.Process(keyed, func() weir.KeyedProcessFunction[string, ttlOp, string] {
			return &expiring{opts: opts}
		}), "out", connector.Sink[string](out))
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	return out.recs
}

func TestStateTTLExpiresValuesOnTheOperatorsClock(t *testing.T) {
	ops := []ttlOp{
		{At: 0, Key: "a", Put: true, V: 1},
		{At: 0, Key: "b", Put: true, V: 2},
		{At: 5 * time.Minute, Key: "a"},
		{At: 11 * time.Minute, Key: "a"},
		{At: 11 * time.Minute, Key: "b"},
		{At: 22 * time.Minute, Key: "a"},
	}
	for _, tc := range []struct {
		name string
		opts []weir.StateOption
		want []string
	}{
		{"without", nil, []string{"5m0s a: 1", "11m0s a: 1", "11m0s b: 2", "22m0s a: 1"}},
		{"on create and write", []weir.StateOption{weir.StateTTL(10 * time.Minute)},
			[]string{"5m0s a: 1", "11m0s a: none", "11m0s b: none", "22m0s a: none"}},
		{"on read and write", []weir.StateOption{weir.StateTTL(10*time.Minute, weir.TTLOnReadAndWrite)},
			[]string{"5m0s a: 1", "11m0s a: 1", "11m0s b: none", "22m0s a: none"}},
	} {
		for _, backend := range []string{"memory", "pebble"} {
			t.Run(tc.name+"/"+backend, func(t *testing.T) {
				if got := runExpiring(t, backend, ops, tc.opts...); !slices.Equal(got, tc.want) {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
			})
		}
	}
}

func TestStateTTLRejectsBadSettings(t *testing.T) {
	for _, tc := range []struct {
		opt  weir.StateOption
		want string
	}{
		{weir.StateTTL(0), "at least a millisecond"},
		{weir.StateTTL(time.Minute, weir.TTLOnReadAndWrite, weir.TTLOnCreateAndWrite), "at most one update type"},
	} {
		p := weir.NewPipeline()
		src := weir.FromSource(p, "ops", connector.Source[ttlOp](sliceSource[ttlOp]{items: []ttlOp{{Key: "a"}}}))
		weir.To(weir.Process(weir.KeyBy(src, func(o ttlOp) string { return o.Key }), func() weir.KeyedProcessFunction[string, ttlOp, string] {
			return &expiring{opts: []weir.StateOption{tc.opt}}
		}), "out", &sink[string]{})
		if err := p.Run(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error saying %q", err, tc.want)
		}
	}
}

// deterministicExpiring says it is deterministic, which its state's
// time-to-live contradicts.
type deterministicExpiring struct{ expiring }

func (*deterministicExpiring) Deterministic() bool { return true }

func TestADeterministicFunctionCannotHaveStateWithATimeToLive(t *testing.T) {
	p := weir.NewPipeline()
	src := weir.FromSource(p, "ops", connector.Source[ttlOp](sliceSource[ttlOp]{items: []ttlOp{{Key: "a"}}}))
	weir.To(weir.Process(weir.KeyBy(src, func(o ttlOp) string { return o.Key }), func() weir.KeyedProcessFunction[string, ttlOp, string] {
		return &deterministicExpiring{expiring{opts: []weir.StateOption{weir.StateTTL(time.Minute)}}}
	}), "out", &sink[string]{})
	if err := p.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "says it is deterministic") {
		t.Fatalf("got %v, want the time-to-live refused", err)
	}
}

// A checkpoint's state without a time-to-live does not restore into the
// same state with one: the job fails before it processes anything, and
// is not restarted.
func TestARestoreCannotAddATimeToLive(t *testing.T) {
	dir := t.TempDir()
	runVersionA(t, dir)
	src := newCutSource(evolveRecords, 2)
	tallies := &sink[string]{}
	p := evolvingJob(dir, src, func() *tallyFn[tallyV1] {
		return &tallyFn[tallyV1]{step: stepV1, show: func(t tallyV1) string { return t.Last },
			opts: []weir.StateOption{weir.StateTTL(time.Hour)}}
	}, weir.Aggregator[reading, accV1, string](aggV1{}), true, tallies, &sink[weir.Windowed[int64, string]]{})
	err := p.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), `state "tally" was checkpointed without a time-to-live`) {
		t.Fatalf("got %v, want the restore refused", err)
	}
	if !errors.Is(err, codec.ErrIncompatible) {
		t.Errorf("the refusal does not wrap codec.ErrIncompatible: %v", err)
	}
	if rec := p.Report().Recoveries; len(rec) > 0 {
		t.Errorf("the refused job was restarted: %+v", rec)
	}
	if len(tallies.recs) > 0 {
		t.Errorf("the refused job output %d records", len(tallies.recs))
	}
}

// State with a time-to-live restores, its values evolving as any state's:
// the model's tallies, which no expiry changes within the hour.
func TestStateWithATimeToLiveRestoresAndEvolves(t *testing.T) {
	dir := t.TempDir()
	runVersionA(t, dir, weir.StateTTL(time.Hour))
	checkVersionB(t, dir, weir.StateTTL(2*time.Hour))
}
