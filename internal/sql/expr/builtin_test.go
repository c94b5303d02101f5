package expr

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/weir-stream/weir/internal/sql/funcs"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

func TestEveryGoNameOfTheRegistryHasAFunction(t *testing.T) {
	for _, f := range funcs.Functions() {
		for _, s := range f.Signatures {
			for _, name := range strings.Fields(s.Go) {
				if len(goFuncs[name]) == 0 {
					t.Errorf("%s names Go function %s, which the expression compiler does not know", f.Name, name)
				}
			}
		}
	}
}

func TestEveryFunctionCompilesForItsTypes(t *testing.T) {
	// One call per signature and numeric type, with every argument a
	// column of the declared type, so an adapter missing for a Go type
	// shows here rather than in a query.
	numeric := []types.Type{types.IntType, types.BigIntType, types.DoubleType, types.DecimalOf(10, 2)}
	anyTypes := []types.Type{types.BigIntType, types.DoubleType, types.VarcharType, types.DecimalOf(10, 2), types.TimestampType}
	for _, f := range funcs.Functions() {
		if f.Name == "CAST" || f.Name == "TRY_CAST" {
			continue
		}
		for _, s := range f.Signatures {
			variants := []types.Type{{}}
			if hasVar(s, funcs.Numeric) {
				variants = numeric
			} else if hasVar(s, funcs.Any) {
				variants = anyTypes
			}
			for _, v := range variants {
				for n := len(s.Args) - s.Optional; n <= len(s.Args); n++ {
					args := make([]Expr, n)
					for i := range args {
						t := fromFuncs(s.Args[i])
						if s.Args[i] == funcs.Numeric || s.Args[i] == funcs.Any {
							t = v
						}
						args[i] = &Col{Index: i, Name: "c", T: t}
					}
					e, err := NewCall(f.Name, args)
					if err != nil {
						t.Errorf("%s%s: %v", f.Name, exprTypes(args), err)
						continue
					}
					if _, err := Compile(e); err != nil {
						t.Errorf("%s: %v", e, err)
					}
				}
			}
		}
	}
}

func hasVar(s funcs.Signature, v funcs.Type) bool {
	for _, a := range s.Args {
		if a == v {
			return true
		}
	}
	return false
}

func TestNumericExpressionsOnColumnsDoNotAllocate(t *testing.T) {
	vals := bid(t, 1230, 1001, "Google", "https://www.nexmark.com/a/b/c?channel_id=xyz", "2024-03-05 19:08:09.123", "cacbc")
	for _, e := range []Expr{
		op(t, "*", num(t, "0.908"), price),
		op(t, "=", call(t, "MOD", auction, num(t, "123")), num(t, "0")),
		op(t, "+", op(t, "/", decCol, intCol), dblCol),
		op(t, "AND", op(t, ">", price, num(t, "10")), op(t, "<", op(t, "-", auction, bidder), num(t, "5000"))),
		call(t, "HOUR", dateTime),
		op(t, "-", dateTime, IntervalLit(4000)),
		in(t, auction, false, num(t, "1"), num(t, "1230")),
	} {
		ev, err := Compile(e)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = ev(vals) }); n != 0 {
			t.Errorf("%s allocates %v times per evaluation", e, n)
		}
	}
}

func TestStringFunctionsDoNotCopyTheirArgument(t *testing.T) {
	// SPLIT_INDEX answers a substring of its argument: no byte is
	// copied between the row and the function.
	vals := bid(t, 1, 1, "c", "https://a/b/c", "2024-01-01", "")
	ev, err := Compile(call(t, "SPLIT_INDEX", url, str("/"), num(t, "3")))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := ev(vals)
	if got.S != "b" {
		t.Fatalf("got %v", got)
	}
	if want := unsafe.StringData(vals[4].S[10:]); unsafe.StringData(got.S) != want {
		t.Error("SPLIT_INDEX's result does not share the row's bytes")
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = ev(vals) }); n > 1 {
		t.Errorf("SPLIT_INDEX allocates %v times per evaluation", n)
	}
}

func TestStringOfExpressionsNamesColumns(t *testing.T) {
	tests := []struct {
		e    Expr
		want string
	}{
		{op(t, "*", num(t, "0.908"), price), "(0.908 * CAST(price AS DECIMAL(19, 0)))"},
		{call(t, "SPLIT_INDEX", url, str("/"), num(t, "3")), "SPLIT_INDEX(url, '/', 3)"},
		{op(t, "-", dateTime, IntervalLit(4000)), "(dateTime - INTERVAL '4.000' SECOND)"},
		{in(t, channel, true, str("a"), str("b")), "(channel NOT IN ('a', 'b'))"},
		{castOf(t, price, types.VarcharType), "CAST(price AS VARCHAR)"},
		{cases(t, nil, When{op(t, "IS NULL", price), BoolLit(true)}), "CASE WHEN (price IS NULL) THEN TRUE ELSE NULL END"},
		{&Lit{V: row.Timestamp(0), T: types.TimestampType}, "TIMESTAMP '1970-01-01 00:00:00.000'"},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("String = %s, want %s", got, tt.want)
		}
	}
}
