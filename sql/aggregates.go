package sql

import (
	"fmt"
	"reflect"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/codec"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
	"github.com/weir-stream/weir/sql/internal/exec"
)

// RegisterAggregate makes agg callable from SQL as the aggregate
// function name (case-insensitive), over one argument: name(x) [FILTER
// (WHERE ...)], also DISTINCT, in group and window aggregations. In and
// Out are Go types SQL values map to (string, int32, int64, float64,
// bool, time.Time, as RegisterFunction takes them); the argument is cast
// to In, NULL arguments are skipped, and a group of no values gives
// agg.Result of agg.Create(). Acc is kept in keyed state, encoded by
// codec.For[Acc] (so it must be a value the engine's codec encodes).
// Such an aggregate cannot take back rows, so it is refused over an
// updating input (an aggregate of an aggregate, say). Register at
// start-up, before Parse.
func RegisterAggregate[In, Acc, Out any](name string, agg weir.Aggregator[In, Acc, Out]) error {
	inT, toGo, _, ok := goType(reflect.TypeFor[In]())
	if !ok {
		return fmt.Errorf("sql: aggregate %s: argument type %s maps to no SQL type", name, reflect.TypeFor[In]())
	}
	outT, _, fromGo, ok := goType(reflect.TypeFor[Out]())
	if !ok {
		return fmt.Errorf("sql: aggregate %s: result type %s maps to no SQL type", name, reflect.TypeFor[Out]())
	}
	c, err := codec.For[Acc]()
	if err != nil {
		return fmt.Errorf("sql: aggregate %s: its accumulator: %w", name, err)
	}
	return exec.RegisterAggregate(name, &goAggregate[In, Acc, Out]{name: name, agg: agg, codec: c, in: inT, out: outT,
		toGo: func(v row.Value) In { return toGo(v).Interface().(In) }, fromGo: func(v Out) row.Value { return fromGo(reflect.ValueOf(v)) }})
}

type goAggregate[In, Acc, Out any] struct {
	name    string
	agg     weir.Aggregator[In, Acc, Out]
	codec   codec.Codec[Acc]
	in, out types.Type
	toGo    func(row.Value) In
	fromGo  func(Out) row.Value
}

func (g *goAggregate[In, Acc, Out]) ResultType(in types.Type) (types.Type, error) {
	if in.Kind != g.in.Kind && !(in.Kind == types.Int && g.in.Kind == types.BigInt) && in.Kind != types.Null {
		return types.Type{}, fmt.Errorf("aggregate %s takes %s, not %s", g.name, g.in, in)
	}
	return g.out, nil
}

func (g *goAggregate[In, Acc, Out]) NewAccumulator() exec.Accumulator {
	return &goAccumulator[In, Acc, Out]{g: g, acc: g.agg.Create()}
}

type goAccumulator[In, Acc, Out any] struct {
	g   *goAggregate[In, Acc, Out]
	acc Acc
}

func (a *goAccumulator[In, Acc, Out]) Accumulate(v row.Value) {
	if v.IsNull() {
		return
	}
	a.acc = a.g.agg.Add(a.acc, a.g.toGo(v))
}

func (a *goAccumulator[In, Acc, Out]) Merge(other exec.Accumulator) {
	a.acc = a.g.agg.Merge(a.acc, other.(*goAccumulator[In, Acc, Out]).acc)
}

func (a *goAccumulator[In, Acc, Out]) Result() row.Value { return a.g.fromGo(a.g.agg.Result(a.acc)) }

func (a *goAccumulator[In, Acc, Out]) AppendBinary(dst []byte) ([]byte, error) {
	return a.g.codec.Append(dst, a.acc), nil
}

func (a *goAccumulator[In, Acc, Out]) DecodeBinary(src []byte) (int, error) {
	return a.g.codec.Decode(src, &a.acc)
}
