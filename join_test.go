package weir_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weir-stream/weir"
)

type order struct {
	User string
	TS   int64
	ID   int
}

type click struct {
	User string
	TS   int64
	Page string
}

func orderTS(o order) int64 { return o.TS }
func clickTS(c click) int64 { return c.TS }

func TestWindowJoinPairsPerWindow(t *testing.T) {
	for _, par := range []int{1, 3} {
		p := weir.NewPipeline(weir.WithParallelism(par))
		orders := weir.FromSource(p, "orders", sliceSource[order]{items: []order{{"u1", 100, 1}, {"u1", 1100, 2}, {"u2", 200, 3}}},
			weir.WithTimestamps(orderTS, time.Second))
		clicks := weir.FromSource(p, "clicks", sliceSource[click]{items: []click{{"u1", 500, "home"}, {"u1", 900, "cart"}, {"u1", 1500, "pay"}, {"u3", 10, "x"}}},
			weir.WithTimestamps(clickTS, time.Second))
		joined := weir.WindowJoin(weir.KeyBy(orders, func(o order) string { return o.User }),
			weir.KeyBy(clicks, func(c click) string { return c.User }), weir.Tumbling(time.Second),
			func(o order, c click) string { return fmt.Sprintf("%d-%s", o.ID, c.Page) })
		out := &sink[string]{}
		weir.To(joined, "out", out)
		run(t, p)
		got := out.sorted(func(a, b string) bool { return a < b })
		if want := []string{"1-cart", "1-home", "2-pay"}; !slices.Equal(got, want) {
			t.Fatalf("parallelism %d: got %q, want %q", par, got, want)
		}
	}
}

func TestIntervalJoin(t *testing.T) {
	p := weir.NewPipeline(weir.WithParallelism(2))
	orders := weir.FromSource(p, "orders", sliceSource[order]{items: []order{{"u1", 1000, 1}, {"u1", 5000, 2}, {"u2", 1000, 3}}},
		weir.WithTimestamps(orderTS, 10*time.Second))
	clicks := weir.FromSource(p, "clicks", sliceSource[click]{items: []click{
		{"u1", 400, "before-out"}, {"u1", 500, "before-edge"}, {"u1", 1000, "same"}, {"u1", 2000, "after-edge"},
		{"u1", 2001, "after-out"}, {"u2", 1500, "u2"}, {"u1", 4600, "second"}}},
		weir.WithTimestamps(clickTS, 10*time.Second))
	// clicks from 500ms before to 1s after the order.
	joined := weir.IntervalJoin(weir.KeyBy(orders, func(o order) string { return o.User }),
		weir.KeyBy(clicks, func(c click) string { return c.User }), -500*time.Millisecond, time.Second,
		func(o order, c click) string { return fmt.Sprintf("%d-%s", o.ID, c.Page) })
	out := &sink[string]{}
	weir.To(joined, "out", out)
	run(t, p)
	got := out.sorted(func(a, b string) bool { return a < b })
	want := []string{"1-after-edge", "1-before-edge", "1-same", "2-second", "3-u2"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// matcher emits an order once the matching payment for its ID arrived,
// whichever comes first.
type matcher struct {
	orders   *weir.ValueState[order, int]
	payments *weir.ValueState[bool, int]
}

func (m *matcher) Open(sc *weir.StateContext[int]) error {
	m.orders = weir.NewValueState[order](sc, "order")
	m.payments = weir.NewValueState[bool](sc, "paid")
	return nil
}

func (m *matcher) ProcessElement1(ctx *weir.KeyedContext[int, string], o order) error {
	if _, paid := m.payments.Value(); paid {
		ctx.Emit(fmt.Sprintf("order %d paid", o.ID))
		return nil
	}
	m.orders.Update(o)
	return nil
}

func (m *matcher) ProcessElement2(ctx *weir.KeyedContext[int, string], id int) error {
	if o, ok := m.orders.Value(); ok {
		ctx.Emit(fmt.Sprintf("order %d paid", o.ID))
		m.orders.Clear()
		return nil
	}
	m.payments.Update(true)
	return nil
}

func TestCoProcessSharesKeyedState(t *testing.T) {
	var orders []order
	var payments []int
	for i := range 500 {
		orders = append(orders, order{ID: i})
		if i%2 == 0 {
			payments = append(payments, i)
		}
	}
	p := weir.NewPipeline(weir.WithParallelism(4))
	o := weir.FromSource(p, "orders", sliceSource[order]{items: orders})
	pay := weir.FromSource(p, "payments", sliceSource[int]{items: payments}, weir.SourceParallelism(1))
	res := weir.CoProcess(weir.KeyBy(o, func(o order) int { return o.ID }), weir.KeyBy(pay, func(id int) int { return id }),
		func() weir.CoProcessFunction[int, order, int, string] { return &matcher{} })
	out := &sink[string]{}
	weir.To(res, "out", out)
	run(t, p)
	if n := len(out.recs); n != 250 {
		t.Fatalf("got %d matches, want 250", n)
	}
}

func TestCoFlatMap(t *testing.T) {
	p := weir.NewPipeline(weir.WithParallelism(2))
	a := weir.FromSource(p, "a", sliceSource[int64]{items: ints(10)})
	b := weir.FromSource(p, "b", sliceSource[string]{items: []string{"x", "y"}})
	res := weir.CoFlatMap(a, b, func(v int64, emit func(string)) { emit(fmt.Sprint(v)) },
		func(s string, emit func(string)) { emit(s); emit(s) })
	out := &sink[string]{}
	weir.To(res, "out", out)
	run(t, p)
	if n := len(out.recs); n != 14 {
		t.Fatalf("got %d records, want 14", n)
	}
}
