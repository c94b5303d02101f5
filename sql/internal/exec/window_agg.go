package exec

import (
	"fmt"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// windowAcc is the state of one key's window: one accumulator per
// aggregate.
type windowAcc struct {
	Accs []accumulator
}

// WindowAggregate aggregates rows per window of s's window table
// function and per group key, as Flink's window aggregation over
// TUMBLE, HOP, CUMULATE and SESSION does (and the legacy GROUP BY
// TUMBLE(...)/HOP(...)/SESSION(...) group windows: their *_START and
// *_END are window_start and window_end, their *_ROWTIME the output
// row's timestamp).
//
// Input: append-only rows (+I), whose record timestamps are their
// s.Time column's values; it refuses an updating input (s.Updating).
// With s.ProcTime the windows follow the wall clock instead (TUMBLE,
// HOP and CUMULATE only; see procTimeWindowAggregate), and the rest of
// this contract holds with "the wall clock" for "the watermark".
// Output: for each key and window, when the
// watermark passes the window's end, one +I row of the key columns (in
// the order of s.Keys), then window_start and window_end (TIMESTAMP(3),
// epoch ms), then the aggregates in the order of s.Aggs; its timestamp
// (window_time) is window_end - 1. A window with no rows emits nothing.
// Rows later than the watermark for every window they belong to are
// dropped, as Flink does with no allowed lateness (counted in weir's
// TaskMetrics.LateDropped). Sessions are per group key.
//
// State: per key and open window, one accumulator per aggregate (the
// distinct values for DISTINCT), kept by weir's window operator until
// the window fires; HOP keeps size/slide windows per key, CUMULATE
// size/step. FIRST_VALUE and LAST_VALUE are refused over sessions
// (their merge would need the rows' order).
func WindowAggregate(in weir.Stream[row.Row], s WindowSpec) (weir.Stream[row.Row], error) {
	a, err := s.assigner()
	if err != nil {
		return weir.Stream[row.Row]{}, err
	}
	fns, err := compileAggs(s.Aggs, false)
	if err != nil {
		return weir.Stream[row.Row]{}, err
	}
	if s.Kind == Session {
		for _, f := range fns {
			if f.kind == fnFirst || f.kind == fnLast {
				return weir.Stream[row.Row]{}, fmt.Errorf("exec: %s over SESSION windows is not supported", f.spec.Fn)
			}
		}
	}
	name := s.Name
	if name == "" {
		name = "window-aggregate"
	}
	if s.ProcTime {
		return procTimeWindowAggregate(in, s, a, fns, name), nil
	}
	keyed := weir.WindowBy(KeyBy(in, s.Keys), a)
	// The aggregators' results leave room for the key columns and the
	// window's bounds in front, which the rows' Map fills in place: one
	// allocation per result row.
	head := len(s.Keys) + 2
	var won weir.Stream[weir.Windowed[string, []row.Value]]
	if at, n, ok := compactSlots(fns); ok && n <= compactSize {
		won = weir.AggregateWindow(keyed, compactAggregator(fns, at, head), weir.Name(name))
	} else {
		won = weir.AggregateWindow(keyed, windowAggregator(fns, head), weir.Name(name))
	}
	return weir.Map(won, func(w weir.Windowed[string, []row.Value]) row.Row {
		n := len(decodeKey(w.Value[:0], w.Key)) // the key columns, in place
		w.Value[n], w.Value[n+1] = row.Timestamp(w.Window.Start), row.Timestamp(w.Window.End)
		return row.Row{V: w.Value}
	}, weir.Name(name+"-rows")), nil
}

// windowAggregator aggregates rows into one accumulator per aggregate;
// its results are the aggregates' values after head empty ones.
func windowAggregator(fns []aggFunc, head int) weir.Aggregator[row.Row, windowAcc, []row.Value] {
	return weir.AggregatorFuncs(
		func() windowAcc { return windowAcc{Accs: make([]accumulator, len(fns))} },
		func(w windowAcc, r row.Row) windowAcc {
			for i := range fns {
				fns[i].add(&w.Accs[i], r, 1)
			}
			return w
		},
		func(x, y windowAcc) windowAcc {
			m := windowAcc{Accs: make([]accumulator, len(fns))}
			for i := range fns {
				m.Accs[i] = fns[i].merge(x.Accs[i], y.Accs[i])
			}
			return m
		},
		func(w windowAcc) []row.Value {
			vs := make([]row.Value, head+len(fns))
			for i := range fns {
				vs[head+i] = fns[i].result(&w.Accs[i])
			}
			return vs
		})
}

// compactAggregator aggregates rows into the slots of a compactAcc;
// at[i] is the first slot of fns[i] (compactSlots). Its results are as
// windowAggregator's.
func compactAggregator(fns []aggFunc, at []int, head int) weir.Aggregator[row.Row, compactAcc, []row.Value] {
	return weir.AggregatorFuncs(
		func() compactAcc { return compactAcc{} },
		func(a compactAcc, r row.Row) compactAcc {
			for i := range fns {
				fns[i].addCompact(a[:], at[i], r)
			}
			return a
		},
		func(x, y compactAcc) compactAcc {
			for i := range fns {
				fns[i].mergeCompact(x[:], y[:], at[i])
			}
			return x
		},
		func(a compactAcc) []row.Value {
			vs := make([]row.Value, head+len(fns))
			for i := range fns {
				vs[head+i] = fns[i].resultCompact(a[:], at[i])
			}
			return vs
		})
}

// decodeKey appends the values of a key KeyBy made to dst.
func decodeKey(dst []row.Value, key string) []row.Value {
	b := []byte(key)
	for len(b) > 0 {
		var v row.Value
		n, err := row.DecodeValue(b, &v)
		if err != nil {
			panic(fmt.Sprintf("exec: corrupt group key: %v", err))
		}
		dst = append(dst, v)
		b = b[n:]
	}
	return dst
}

// WindowTVF is a window table function on its own (SELECT * FROM
// TABLE(TUMBLE(...)), or the input of a window join or window TopN): it
// appends window_start, window_end and window_time (TIMESTAMP(3),
// window_end - 1) to every row.
//
// Input: append-only rows whose s.Time column is a rowtime; an
// updating input and processing time are refused. TUMBLE, HOP and
// CUMULATE are stateless: a row comes out once per window it belongs
// to (HOP size/slide times, CUMULATE up to size/step times) at once,
// with its own timestamp; a row whose time is NULL is dropped. SESSION
// needs the session's end: rows are keyed by s.Keys (PARTITION BY),
// kept in state until the watermark passes their session's end, then
// emitted with the session's window and window_time as timestamp; rows
// late for every session are dropped.
func WindowTVF(in weir.Stream[row.Row], s WindowSpec) (weir.Stream[row.Row], error) {
	a, err := s.assigner()
	if err != nil {
		return weir.Stream[row.Row]{}, err
	}
	if s.ProcTime {
		return weir.Stream[row.Row]{}, fmt.Errorf("exec: a %s table function on processing time is not supported", s.Kind)
	}
	name := s.Name
	if name == "" {
		name = "window-tvf"
	}
	if s.Kind == Session {
		return weir.ProcessWindow(weir.WindowBy(KeyBy(in, s.Keys), a),
			func(_ string, w weir.Window, rows []row.Row, emit func(row.Row)) error {
				for _, r := range rows {
					emit(withWindow(r, w))
				}
				return nil
			}, weir.Name(name)), nil
	}
	col := s.Time
	return weir.FlatMap(in, func(r row.Row, emit func(row.Row)) {
		t := r.V[col]
		if t.K != types.Timestamp {
			return
		}
		var buf [8]weir.Window
		for _, w := range a.Assign(buf[:0], t.I) {
			emit(withWindow(r, w))
		}
	}, weir.Name(name)), nil
}

// withWindow returns r with window_start, window_end and window_time
// appended.
func withWindow(r row.Row, w weir.Window) row.Row {
	vs := make([]row.Value, len(r.V), len(r.V)+3)
	copy(vs, r.V)
	vs = append(vs, row.Timestamp(w.Start), row.Timestamp(w.End), row.Timestamp(w.MaxTimestamp()))
	return row.Row{Op: r.Op, V: vs}
}
