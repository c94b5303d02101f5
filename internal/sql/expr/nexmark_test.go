package expr

import (
	"testing"

	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

func q21Channel(t testing.TB) Expr {
	lower := call(t, "lower", channel)
	c, err := NewCase([]When{
		{Cond: op(t, "=", lower, str("apple")), Result: str("0")},
		{Cond: op(t, "=", lower, str("google")), Result: str("1")},
		{Cond: op(t, "=", lower, str("facebook")), Result: str("2")},
		{Cond: op(t, "=", lower, str("baidu")), Result: str("3")},
	}, call(t, "REGEXP_EXTRACT", url, str("(&|^)channel_id=([^&]*)"), num(t, "2")))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func q21Filter(t testing.TB) Expr {
	in, err := NewIn(call(t, "lower", channel), []Expr{str("apple"), str("google"), str("facebook"), str("baidu")}, false)
	if err != nil {
		t.Fatal(err)
	}
	extract := call(t, "REGEXP_EXTRACT", url, str("(&|^)channel_id=([^&]*)"), num(t, "2"))
	return op(t, "OR", op(t, "IS NOT NULL", extract), in)
}

func q14BidTimeType(t testing.TB) Expr {
	hour := call(t, "HOUR", dateTime)
	c, err := NewCase([]When{
		{Cond: op(t, "AND", op(t, ">=", hour, num(t, "8")), op(t, "<=", hour, num(t, "18"))), Result: str("dayTime")},
		{Cond: op(t, "OR", op(t, "<=", hour, num(t, "6")), op(t, ">=", hour, num(t, "20"))), Result: str("nightTime")},
	}, str("otherTime"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNexmarkExpressionsHaveFlinksTypesAndValues(t *testing.T) {
	vals := bid(t, 1230, 1001, "Google", "https://www.nexmark.com/a/b/c?channel_id=xyz", "2024-03-05 19:08:09.123", "cacbc")
	q1 := op(t, "*", num(t, "0.908"), price)
	tests := []struct {
		name     string
		e        Expr
		wantType string
		want     row.Value
	}{
		{"q1's 0.908 * price is a DECIMAL(23, 3) with the exact product", q1, "DECIMAL(23, 3)", row.Decimal(908 * 1001)},
		{"CAST of q1's product to VARCHAR writes its three decimals", call(t, "CHAR_LENGTH", castOf(t, q1, types.VarcharType)), "INT", row.Int(7)},
		{"MOD(auction, 123) = 0 holds for a multiple of 123", op(t, "=", call(t, "MOD", auction, num(t, "123")), num(t, "0")), "BOOLEAN", row.Bool(true)},
		{"q14's CASE on HOUR(dateTime) says otherTime at 19h", q14BidTimeType(t), "VARCHAR NOT NULL", row.String("otherTime")},
		{"q14's count_char(extra, 'c') counts the c's", call(t, "count_char", extra, str("c")), "BIGINT", row.BigInt(3)},
		{"q21's channel CASE maps google to 1", q21Channel(t), "VARCHAR", row.String("1")},
		{"q21's filter keeps a row with a channel_id", q21Filter(t), "BOOLEAN", row.Bool(true)},
		{"q22's SPLIT_INDEX(url, '/', 3) is the first path segment", call(t, "SPLIT_INDEX", url, str("/"), num(t, "3")), "VARCHAR", row.String("a")},
		{"DATE_FORMAT(dateTime, 'yyyy-MM-dd') is the day", call(t, "DATE_FORMAT", dateTime, str("yyyy-MM-dd")), "VARCHAR", row.String("2024-03-05")},
		{"DATE_FORMAT(dateTime, 'HH:mm') is the minute", call(t, "DATE_FORMAT", dateTime, str("HH:mm")), "VARCHAR", row.String("19:08")},
		{"dateTime - INTERVAL '4' SECOND stays TIMESTAMP(3) without the time attribute",
			op(t, "-", dateTime, IntervalLit(4000)), "TIMESTAMP(3)", row.Timestamp(ts(t, "2024-03-05 19:08:05.123"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.e.Type().String(); got != tt.wantType {
				t.Errorf("type of %s = %s, want %s", tt.e, got, tt.wantType)
			}
			if got := mustEval(t, tt.e, vals); got != tt.want {
				t.Errorf("%s = %+v, want %+v", tt.e, got, tt.want)
			}
		})
	}
}

func castOf(t testing.TB, x Expr, to types.Type) Expr {
	e, err := NewCast(x, to, false)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestNexmarkExpressionsOnOtherRows(t *testing.T) {
	night := bid(t, 1231, 5, "Apple", "https://x/y?a=1", "2024-03-05 03:00:00", "")
	if got := mustEval(t, q14BidTimeType(t), night); got != row.String("nightTime") {
		t.Errorf("q14 at 3h = %v, want nightTime", got)
	}
	day := bid(t, 1, 5, "x", "https://x/y", "2024-03-05 12:00:00", "")
	if got := mustEval(t, q14BidTimeType(t), day); got != row.String("dayTime") {
		t.Errorf("q14 at 12h = %v, want dayTime", got)
	}
	if got := mustEval(t, q21Channel(t), night); got != row.String("0") {
		t.Errorf("q21 channel of Apple = %v, want 0", got)
	}
	other := bid(t, 1, 5, "Bing", "https://x/y?a=1", "2024-03-05 03:00:00", "")
	if got := mustEval(t, q21Channel(t), other); got != null {
		t.Errorf("q21 channel of Bing without channel_id = %v, want NULL", got)
	}
	pred, err := CompilePredicate(q21Filter(t))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := pred(other); ok || err != nil {
		t.Errorf("q21 filter keeps Bing without channel_id (%v, %v)", ok, err)
	}
	if got := mustEval(t, op(t, "=", call(t, "MOD", auction, num(t, "123")), num(t, "0")), other); got != row.Bool(false) {
		t.Errorf("MOD(1, 123) = 0 is %v", got)
	}
	if got := mustEval(t, call(t, "SPLIT_INDEX", url, str("/"), num(t, "9")), other); got != null {
		t.Errorf("SPLIT_INDEX out of range = %v, want NULL", got)
	}
}

func TestTimeAttributesSurviveOnlyOnTheColumn(t *testing.T) {
	if dateTime.Type().Time != types.RowTime {
		t.Fatal("the column lost its time attribute")
	}
	for _, e := range []Expr{
		op(t, "-", dateTime, IntervalLit(4000)),
		op(t, "+", IntervalLit(1), dateTime),
		castOf(t, dateTime, types.TimestampType),
	} {
		if e.Type().Time != types.NoTime {
			t.Errorf("%s keeps the time attribute: %s", e, e.Type())
		}
	}
}

func BenchmarkCompiledExpressions(b *testing.B) {
	vals := bid(b, 1230, 1001, "Google", "https://www.nexmark.com/a/b/c?channel_id=xyz&b=2", "2024-03-05 19:08:09.123", "cacbc")
	for _, bc := range []struct {
		name string
		e    Expr
	}{
		{"q1 0.908*price", op(b, "*", num(b, "0.908"), price)},
		{"q21 channel CASE", q21Channel(b)},
		{"q21 filter", q21Filter(b)},
	} {
		ev, err := Compile(bc.e)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := ev(vals); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
