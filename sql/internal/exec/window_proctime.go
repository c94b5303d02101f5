package exec

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// procWindow is one open processing-time window of a key.
type procWindow struct {
	Start int64
	Accs  []accumulator
}

// procTimeWindowAggregate is WindowAggregate over processing time
// (PROCTIME()) for TUMBLE, HOP and CUMULATE: a row belongs to the
// windows of the wall-clock time at which the operator takes it, and a
// window fires when the wall clock reaches its end, as Flink's
// processing-time windows do. Its results depend on timing and are not
// reproducible; a restore re-aggregates replayed rows at the time of
// the replay.
//
// State: per key, a weir.MapState from window end to the window's
// accumulators, each removed when its processing-time timer fires.
func procTimeWindowAggregate(in weir.Stream[row.Row], s WindowSpec, a weir.WindowAssigner, fns []aggFunc, name string) weir.Stream[row.Row] {
	return weir.Process(KeyBy(in, s.Keys), func() weir.KeyedProcessFunction[string, row.Row, row.Row] {
		return &procWindowAgg{assign: a, fns: fns}
	}, weir.Name(name))
}

type procWindowAgg struct {
	assign  weir.WindowAssigner
	fns     []aggFunc
	windows *weir.MapState[int64, procWindow, string]
	buf     []weir.Window
}

func (p *procWindowAgg) Open(sc *weir.StateContext[string]) error {
	p.windows = weir.NewMapState[int64, procWindow](sc, "windows")
	return nil
}

func (p *procWindowAgg) ProcessElement(ctx *weir.KeyedContext[string, row.Row], r row.Row) error {
	p.buf = p.assign.Assign(p.buf[:0], ctx.ProcessingTime())
	for _, w := range p.buf {
		pw, ok := p.windows.Get(w.End)
		if !ok {
			pw = procWindow{Start: w.Start, Accs: make([]accumulator, len(p.fns))}
			ctx.RegisterProcessingTimer(w.MaxTimestamp())
		}
		for i := range p.fns {
			p.fns[i].add(&pw.Accs[i], r, 1)
		}
		p.windows.Put(w.End, pw)
	}
	return nil
}

func (p *procWindowAgg) OnTimer(ctx *weir.KeyedContext[string, row.Row], t int64, _ weir.TimeDomain) error {
	end := t + 1
	pw, ok := p.windows.Get(end)
	if !ok {
		return nil
	}
	p.windows.Delete(end)
	vs := decodeKey(make([]row.Value, 0, 8), ctx.Key())
	vs = append(vs, row.Timestamp(pw.Start), row.Timestamp(end))
	for i := range p.fns {
		vs = append(vs, p.fns[i].result(&pw.Accs[i]))
	}
	ctx.EmitAt(t, row.Row{V: vs})
	return nil
}
