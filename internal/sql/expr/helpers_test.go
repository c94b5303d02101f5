package expr

import (
	"testing"

	"github.com/weir-stream/weir/internal/sql/funcs"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// The Nexmark bid table, as the queries read it.
var (
	auction  = &Col{Index: 0, Name: "auction", T: types.BigIntType}
	bidder   = &Col{Index: 1, Name: "bidder", T: types.BigIntType}
	price    = &Col{Index: 2, Name: "price", T: types.BigIntType}
	channel  = &Col{Index: 3, Name: "channel", T: types.VarcharType}
	url      = &Col{Index: 4, Name: "url", T: types.VarcharType}
	dateTime = &Col{Index: 5, Name: "dateTime", T: types.Type{Kind: types.Timestamp, Precision: 3, Time: types.RowTime}}
	extra    = &Col{Index: 6, Name: "extra", T: types.VarcharType}
	intCol   = &Col{Index: 7, Name: "i", T: types.IntType}
	decCol   = &Col{Index: 8, Name: "d", T: types.DecimalOf(10, 2)}
	dblCol   = &Col{Index: 9, Name: "x", T: types.DoubleType}
	boolCol  = &Col{Index: 10, Name: "b", T: types.BooleanType}
)

func ts(t testing.TB, text string) int64 {
	t.Helper()
	v, err := funcs.ParseTimestamp(text)
	if err != nil {
		t.Fatal(err)
	}
	return v.UnixMilli()
}

// bid returns the values of one bid row (and the extra test columns).
func bid(t testing.TB, auc, price int64, channel, url, dateTime, extra string) []row.Value {
	return []row.Value{
		row.BigInt(auc), row.BigInt(7), row.BigInt(price), row.String(channel), row.String(url),
		row.Timestamp(ts(t, dateTime)), row.String(extra),
		row.Int(5), row.Decimal(1250), row.Double(2.5), row.Bool(true),
	}
}

// nulls returns a row of NULLs as wide as bid's.
func nulls() []row.Value { return make([]row.Value, 11) }

func op(t testing.TB, o string, args ...Expr) Expr {
	t.Helper()
	e, err := NewOp(o, args...)
	if err != nil {
		t.Fatalf("NewOp(%s): %v", o, err)
	}
	return e
}

func call(t testing.TB, name string, args ...Expr) Expr {
	t.Helper()
	e, err := NewCall(name, args)
	if err != nil {
		t.Fatalf("NewCall(%s): %v", name, err)
	}
	return e
}

func num(t testing.TB, text string) Expr {
	t.Helper()
	l, err := NumberLit(text)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func str(s string) Expr { return StringLit(s) }

func eval(t testing.TB, e Expr, vals []row.Value) (row.Value, error) {
	t.Helper()
	ev, err := Compile(e)
	if err != nil {
		t.Fatalf("Compile(%s): %v", e, err)
	}
	return ev(vals)
}

func mustEval(t testing.TB, e Expr, vals []row.Value) row.Value {
	t.Helper()
	v, err := eval(t, e, vals)
	if err != nil {
		t.Fatalf("%s: %v", e, err)
	}
	return v
}

var null = row.Null()
