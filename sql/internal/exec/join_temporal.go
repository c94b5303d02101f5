package exec

import (
	"fmt"
	"slices"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// checkTemporal checks a temporal join's spec: inner or left only.
func checkTemporal(spec JoinSpec) {
	if err := spec.check(); err != nil {
		panic(err)
	}
	if spec.Kind != InnerJoin && spec.Kind != LeftJoin {
		panic(fmt.Errorf("exec: a temporal join is inner or left, not %v", spec.Kind))
	}
}

// LookupJoin is a processing-time temporal join
// (FOR SYSTEM_TIME AS OF the probe's PROCTIME()) against a bounded table
// read in full, as Flink joins a filesystem table through its lookup
// function: every subtask reads the table once, when it starts, with
// table, and each probe row joins the table's rows with equal keys
// (spec.LeftKeys of the probe = spec.RightKeys of the table) and
// spec.Cond. It reads Kind (inner or left), LeftKeys, RightKeys,
// LeftWidth, RightWidth, Cond and Name.
//
// Input: any changelog of probe rows; table's rows are the table's
// contents (their ops are ignored). Output: the probe's columns then the
// table's, each joined row with its probe row's op, at its probe row's
// timestamp; a left join pads a probe row without a match with NULLs. The
// output is append-only when the probe input is.
//
// State: none checkpointed; each subtask holds the table in memory.
//
// Errors: a bad spec panics while the pipeline is built; an error of table
// fails the subtask's start, and one of Cond the job.
func LookupJoin(probe weir.Stream[row.Row], table func() ([]row.Row, error), spec JoinSpec) weir.Stream[row.Row] {
	checkTemporal(spec)
	return weir.Process(KeyBy(probe, spec.LeftKeys), func() weir.KeyedProcessFunction[string, row.Row, row.Row] {
		return &lookupJoin{joiner: joiner{spec: spec}, table: table}
	}, spec.opts("lookup-join")...)
}

type lookupJoin struct {
	joiner
	table func() ([]row.Row, error)
	rows  map[string][]row.Row // by key
}

func (j *lookupJoin) Open(*weir.StateContext[string]) error {
	rows, err := j.table()
	if err != nil {
		return fmt.Errorf("exec: reading the lookup join's table: %w", err)
	}
	j.rows = map[string][]row.Row{}
	for _, r := range rows {
		if nullKey(r, j.spec.RightKeys) {
			continue
		}
		k := string(row.Key(nil, r, j.spec.RightKeys))
		j.rows[k] = append(j.rows[k], r)
	}
	return nil
}

func (j *lookupJoin) ProcessElement(ctx *weir.KeyedContext[string, row.Row], in row.Row) error {
	matched := false
	if !nullKey(in, j.spec.LeftKeys) {
		for _, r := range j.rows[ctx.Key()] {
			ok, err := j.match(in.V, r.V)
			if err != nil {
				return err
			}
			if ok {
				matched = true
				ctx.Emit(j.concat(in.Op, in.V, r.V))
			}
		}
	}
	if !matched && j.spec.Kind == LeftJoin {
		ctx.Emit(j.concat(in.Op, in.V, nil))
	}
	return nil
}

// TemporalProctimeJoin is Flink's processing-time temporal join against
// a changelog stream (TemporalProcessTimeJoinOperator):
//
//	probe JOIN versioned FOR SYSTEM_TIME AS OF probe.proc_time ON keys
//
// A probe row joins the versioned table's row with its keys as it is when
// the probe row arrives. The keys must include the versioned table's
// primary key: the operator keeps one row per key, the last one set. It
// reads Kind (inner or left), LeftKeys, RightKeys, LeftWidth, RightWidth,
// Cond, StateTTL and Name.
//
// Input: any probe rows; the versioned table's changelog (+I and +U set
// the key's row, -U and -D clear it). Output: the probe's columns then the
// table row's, with the probe row's op (append-only when the probe input
// is), NULLs for a left join's probe row without a row or whose row fails
// Cond. The result depends on how the two inputs interleave, as in Flink.
//
// State: the table's current row per key (forgotten StateTTL after it was
// written, if set).
//
// Errors: a bad spec panics while the pipeline is built; an error of Cond
// fails the job.
func TemporalProctimeJoin(probe, versioned weir.Stream[row.Row], spec JoinSpec) weir.Stream[row.Row] {
	checkTemporal(spec)
	return weir.CoProcess(KeyBy(probe, spec.LeftKeys), KeyBy(versioned, spec.RightKeys),
		func() weir.CoProcessFunction[string, row.Row, row.Row, row.Row] {
			return &proctimeJoin{joiner: joiner{spec: spec}}
		}, spec.opts("temporal-join")...)
}

type proctimeJoin struct {
	joiner
	current *weir.ValueState[row.Row, string]
}

func (j *proctimeJoin) Open(sc *weir.StateContext[string]) error {
	j.current = weir.NewValueState[row.Row](sc, "current", j.spec.ttl()...)
	return nil
}

func (j *proctimeJoin) ProcessElement1(ctx *weir.KeyedContext[string, row.Row], in row.Row) error {
	if !nullKey(in, j.spec.LeftKeys) {
		if v, ok := j.current.Value(); ok {
			ok, err := j.match(in.V, v.V)
			if err != nil {
				return err
			}
			if ok {
				ctx.Emit(j.concat(in.Op, in.V, v.V))
				return nil
			}
		}
	}
	if j.spec.Kind == LeftJoin {
		ctx.Emit(j.concat(in.Op, in.V, nil))
	}
	return nil
}

func (j *proctimeJoin) ProcessElement2(ctx *weir.KeyedContext[string, row.Row], in row.Row) error {
	switch {
	case nullKey(in, j.spec.RightKeys):
	case in.Op.Retracts():
		j.current.Clear()
	default:
		j.current.Update(row.Row{Op: row.Insert, V: in.V})
	}
	return nil
}

// TemporalRowtimeJoin is Flink's event-time temporal join
// (TemporalRowTimeJoinOperator):
//
//	probe JOIN versioned FOR SYSTEM_TIME AS OF probe.rowtime ON keys
//
// A probe row at time t (column spec.LeftTime) joins the version of the
// versioned table's row with equal keys valid at t: the latest of its
// rows with a rowtime (column spec.RightTime) at or before t, unless that
// is a deletion. The keys must include the versioned table's primary key,
// so a key has one version at a time. It reads Kind (inner or left),
// LeftKeys, RightKeys, LeftWidth, RightWidth, Cond, LeftTime, RightTime
// and Name.
//
// Input: append-only probe rows; the versioned table's changelog (+I and
// +U set the version from their rowtime on, -D deletes the row from its
// rowtime on, -U is ignored as its +U follows). Of two versions with one
// rowtime the later to arrive wins.
//
// Output: append-only (+I), the probe's columns then the version's, NULLs
// for a left join's probe row without a version; a probe row is emitted
// when the watermark reaches its time (at once if it arrives behind the
// watermark), at its time.
//
// State: the probe rows the watermark has not reached, and per key the
// versions from the latest one at or before the watermark on; older
// versions are dropped as the watermark passes them.
//
// Errors: a bad spec panics while the pipeline is built; a probe row that
// is not an insert, or an error of Cond, fails the job.
func TemporalRowtimeJoin(probe, versioned weir.Stream[row.Row], spec JoinSpec) weir.Stream[row.Row] {
	checkTemporal(spec)
	return weir.CoProcess(KeyBy(probe, spec.LeftKeys), KeyBy(versioned, spec.RightKeys),
		func() weir.CoProcessFunction[string, row.Row, row.Row, row.Row] {
			return &rowtimeJoin{joiner: joiner{spec: spec}}
		}, spec.opts("temporal-join")...)
}

type rowtimeJoin struct {
	joiner
	probes   *weir.MapState[int64, row.Row, string] // by arrival number
	next     *weir.ValueState[int64, string]        // the next arrival number
	versions *weir.MapState[int64, row.Row, string] // by rowtime
}

func (j *rowtimeJoin) Open(sc *weir.StateContext[string]) error {
	j.probes = weir.NewMapState[int64, row.Row](sc, "probes")
	j.next = weir.NewValueState[int64](sc, "next")
	j.versions = weir.NewMapState[int64, row.Row](sc, "versions")
	return nil
}

func (j *rowtimeJoin) ProcessElement1(ctx *weir.KeyedContext[string, row.Row], in row.Row) error {
	if in.Op != row.Insert {
		return errNotInsert("temporal join", in)
	}
	t := in.V[j.spec.LeftTime].I
	if t <= ctx.Watermark() || nullKey(in, j.spec.LeftKeys) {
		return j.emit(ctx, in)
	}
	n, _ := j.next.Value()
	j.next.Update(n + 1)
	j.probes.Put(n, in)
	ctx.RegisterEventTimer(t)
	return nil
}

func (j *rowtimeJoin) ProcessElement2(ctx *weir.KeyedContext[string, row.Row], in row.Row) error {
	if in.Op == row.UpdateBefore || nullKey(in, j.spec.RightKeys) {
		return nil
	}
	t := in.V[j.spec.RightTime].I
	j.versions.Put(t, in)
	if t > ctx.Watermark() {
		ctx.RegisterEventTimer(t) // to drop older versions in time
	}
	return nil
}

// version returns the version valid at t.
func (j *rowtimeJoin) version(t int64) (row.Row, bool) {
	best, found := int64(0), false
	var v row.Row
	j.versions.All(func(vt int64, r row.Row) bool {
		if vt <= t && (!found || vt > best) {
			best, found, v = vt, true, r
		}
		return true
	})
	if !found || v.Op.Retracts() {
		return row.Row{}, false
	}
	return v, true
}

// emit joins the probe row in with its version and emits the result.
func (j *rowtimeJoin) emit(ctx *weir.KeyedContext[string, row.Row], in row.Row) error {
	t := in.V[j.spec.LeftTime].I
	if !nullKey(in, j.spec.LeftKeys) {
		if v, ok := j.version(t); ok {
			ok, err := j.match(in.V, v.V)
			if err != nil {
				return err
			}
			if ok {
				ctx.EmitAt(t, j.concat(row.Insert, in.V, v.V))
				return nil
			}
		}
	}
	if j.spec.Kind == LeftJoin {
		ctx.EmitAt(t, j.concat(row.Insert, in.V, nil))
	}
	return nil
}

// OnTimer emits the probe rows up to the watermark, in time and then
// arrival order, and drops the versions no later probe row can see.
func (j *rowtimeJoin) OnTimer(ctx *weir.KeyedContext[string, row.Row], ts int64, _ weir.TimeDomain) error {
	wm := max(ts, ctx.Watermark())
	type probe struct {
		n int64
		r row.Row
	}
	var due []probe
	j.probes.All(func(n int64, r row.Row) bool {
		if r.V[j.spec.LeftTime].I <= wm {
			due = append(due, probe{n, r})
		}
		return true
	})
	slices.SortFunc(due, func(a, b probe) int {
		if c := a.r.V[j.spec.LeftTime].I - b.r.V[j.spec.LeftTime].I; c != 0 {
			return int(min(max(c, -1), 1))
		}
		return int(a.n - b.n)
	})
	for _, p := range due {
		if err := j.emit(ctx, p.r); err != nil {
			return err
		}
		j.probes.Delete(p.n)
	}
	// Keep the latest version at or before the watermark (later probe
	// rows may see it) unless it is a deletion, and every later one.
	var old []int64
	latest, found := int64(0), false
	j.versions.All(func(vt int64, _ row.Row) bool {
		if vt <= wm {
			old = append(old, vt)
			if !found || vt > latest {
				latest, found = vt, true
			}
		}
		return true
	})
	for _, vt := range old {
		if vt != latest {
			j.versions.Delete(vt)
		}
	}
	if found {
		if v, _ := j.versions.Get(latest); v.Op.Retracts() {
			j.versions.Delete(latest)
		}
	}
	if j.probes.Len() == 0 && j.versions.Len() == 0 {
		j.next.Clear()
	}
	return nil
}
