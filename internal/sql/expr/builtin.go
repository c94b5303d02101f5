package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/weir-stream/weir/internal/sql/funcs"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// goFuncs maps the Go names of the registry (funcs.Signature.Go) to the
// function values of package funcs; a generic function is listed once
// per type it is used at. A test checks that every name of the registry
// is here. CAST's functions are listed for that check; casts compile
// through castFunc.
var goFuncs = map[string][]any{
	"CharLength": {funcs.CharLength}, "Upper": {funcs.Upper}, "Lower": {funcs.Lower},
	"Trim": {funcs.Trim}, "Ltrim": {funcs.Ltrim}, "Rtrim": {funcs.Rtrim},
	"Substring": {funcs.Substring}, "Concat": {funcs.Concat}, "ConcatWs": {funcs.ConcatWs},
	"Replace": {funcs.Replace}, "Position": {funcs.Position}, "Locate": {funcs.Locate},
	"Initcap": {funcs.Initcap}, "Lpad": {funcs.Lpad}, "Rpad": {funcs.Rpad},
	"Repeat": {funcs.Repeat}, "Reverse": {funcs.Reverse}, "SplitIndex": {funcs.SplitIndex},
	"RegexpExtract": {funcs.RegexpExtract}, "RegexpReplace": {funcs.RegexpReplace},
	"RegexpMatch": {funcs.RegexpMatch}, "Like": {funcs.Like},
	"DateFormatTimestamp": {funcs.DateFormatTimestamp}, "ToTimestamp": {funcs.ToTimestamp},
	"UnixTimestamp": {funcs.UnixTimestamp}, "FromUnixtime": {funcs.FromUnixtime}, "Extract": {funcs.Extract},
	"Year": {funcs.Year}, "Quarter": {funcs.Quarter}, "Month": {funcs.Month}, "Week": {funcs.Week},
	"DayOfYear": {funcs.DayOfYear}, "DayOfMonth": {funcs.DayOfMonth}, "DayOfWeek": {funcs.DayOfWeek},
	"Hour": {funcs.Hour}, "Minute": {funcs.Minute}, "Second": {funcs.Second},
	"Abs": {funcs.Abs[int32], funcs.Abs[int64]}, "AbsFloat64": {funcs.AbsFloat64}, "AbsDecimal": {funcs.AbsDecimal},
	"Mod": {funcs.Mod[int32], funcs.Mod[int64]}, "ModFloat64": {funcs.ModFloat64},
	"Round": {funcs.Round[int32], funcs.Round[int64]}, "RoundFloat64": {funcs.RoundFloat64}, "RoundDecimal": {funcs.RoundDecimal},
	"FloorFloat64": {funcs.FloorFloat64}, "FloorDecimal": {funcs.FloorDecimal},
	"CeilFloat64": {funcs.CeilFloat64}, "CeilDecimal": {funcs.CeilDecimal},
	"Power": {funcs.Power}, "Sqrt": {funcs.Sqrt}, "Ln": {funcs.Ln}, "Log10": {funcs.Log10}, "Exp": {funcs.Exp},
	"Sign": {funcs.Sign[int32], funcs.Sign[int64]}, "SignFloat64": {funcs.SignFloat64}, "SignDecimal": {funcs.SignDecimal},
	"Coalesce": {funcs.Coalesce[row.Value]}, "NullIf": {funcs.NullIf[row.Value]}, "If": {funcs.If[row.Value]},
	"Greatest":      {funcs.Greatest[int64], funcs.Greatest[float64], funcs.Greatest[string]},
	"Least":         {funcs.Least[int64], funcs.Least[float64], funcs.Least[string]},
	"StringToInt64": {funcs.StringToInt64}, "StringToInt32": {funcs.StringToInt32}, "StringToFloat64": {funcs.StringToFloat64},
	"StringToDecimal": {funcs.StringToDecimal}, "StringToBool": {funcs.StringToBool}, "StringToTimestamp": {funcs.StringToTimestamp},
	"Int64ToInt32": {funcs.Int64ToInt32}, "Float64ToInt64": {funcs.Float64ToInt64}, "Float64ToInt32": {funcs.Float64ToInt32},
	"Float64ToDecimal": {funcs.Float64ToDecimal}, "Int64ToDecimal": {funcs.Int64ToDecimal}, "DecimalToInt64": {funcs.DecimalToInt64},
	"DecimalToInt32": {funcs.DecimalToInt32}, "DecimalToFloat64": {funcs.DecimalToFloat64}, "BoolToInt64": {funcs.BoolToInt64},
	"Int64ToBool": {funcs.Int64ToBool}, "Int64ToString": {funcs.Int64ToString}, "BoolToString": {funcs.BoolToString},
	"DecimalToString": {funcs.DecimalToString}, "TimestampToString": {funcs.TimestampToString}, "Float64ToString": {funcs.Float64ToString},
	"Try":       {funcs.Try[row.Value]},
	"CountChar": {funcs.CountChar},
}

// optionalDefaults are the values of trailing optional arguments a call
// leaves out, by the overload's first Go name. SUBSTRING and
// TO_TIMESTAMP are also told whether the argument was given.
var optionalDefaults = map[string][]row.Value{
	"Substring":     {row.BigInt(0)},
	"Locate":        {row.Int(1)},
	"RegexpExtract": {row.BigInt(funcs.DefaultExtractIndex)},
	"Like":          {row.String("")},
	"ToTimestamp":   {row.String("")},
	"UnixTimestamp": {row.String(funcs.DefaultTimestampPattern)},
	"FromUnixtime":  {row.String(funcs.DefaultTimestampPattern)},
	"Round":         {row.Int(0)},
}

func compileCall(e *Call, evs []Eval, own bool) (Eval, error) {
	s := e.Fn.Signatures[e.Sig]
	names := strings.Fields(s.Go)
	ts := make([]types.Type, len(e.Args))
	for i, a := range e.Args {
		ts[i] = a.Type()
	}
	full := len(e.Args) >= len(s.Args)
	if !full && !s.Variadic {
		defaults := optionalDefaults[names[0]]
		if len(defaults) < len(s.Args)-len(e.Args) {
			return nil, fmt.Errorf("%s: no default for its omitted arguments", e)
		}
		for i, v := range defaults[:len(s.Args)-len(e.Args)] {
			evs = append(evs, constEval(v))
			ts = append(ts, fromFuncs(s.Args[len(e.Args)+i]))
		}
	}
	ev, err := specialize(e, names[0], evs, ts, own)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		for _, fv := range goFuncs[name] {
			if ev != nil {
				break
			}
			ev = adapt(fv, evs, ts, e.T, full)
		}
	}
	if ev == nil {
		ev = integerIdentity(e, evs)
	}
	if ev == nil {
		return nil, fmt.Errorf("%s has no implementation for %s", e.Fn.Name, exprTypes(e.Args))
	}
	inner := ev
	return func(vals []row.Value) (row.Value, error) {
		v, err := inner(vals)
		if err != nil {
			return v, fmt.Errorf("%s: %w", e, err)
		}
		return v, nil
	}, nil
}

// integerIdentity covers the numeric functions the registry implements
// for the types that need work only: FLOOR and CEIL of an integer are
// the integer, MOD of DECIMALs is the % operator.
func integerIdentity(e *Call, evs []Eval) Eval {
	k := e.T.Kind
	switch {
	case (e.Fn.Name == "FLOOR" || e.Fn.Name == "CEIL") && (k == types.Int || k == types.BigInt):
		return evs[0]
	case e.Fn.Name == "MOD" && k == types.Decimal:
		return compileDecimal(&Op{Op: "%", Args: e.Args, T: e.T}, evs[0], evs[1], e.Args[0].Type().Scale, e.Args[1].Type().Scale)
	}
	return nil
}

// adapt returns the closure calling function value fv with arguments of
// types ts and a result of type rt, or nil when fv's Go types are not
// those. full says every optional argument was given.
func adapt(fv any, evs []Eval, ts []types.Type, rt types.Type, full bool) Eval {
	switch f := fv.(type) {
	case func(string) string:
		return call1(lift1(f), evs, ts, rt)
	case func(string) int32:
		return call1(lift1(f), evs, ts, rt)
	case func(time.Time) int64:
		return call1(lift1(f), evs, ts, rt)
	case func(int32) int32:
		return call1(lift1(f), evs, ts, rt)
	case func(int64) int64:
		return call1(lift1(f), evs, ts, rt)
	case func(float64) float64:
		return call1(lift1(f), evs, ts, rt)
	case func(funcs.Decimal) funcs.Decimal:
		return call1(lift1(f), evs, ts, rt)
	case func(string, string) int32:
		return call2(lift2(f), evs, ts, rt)
	case func(string, string) int64:
		return call2(lift2(f), evs, ts, rt)
	case func(string, string) bool:
		return call2(lift2(f), evs, ts, rt)
	case func(string, int32) string:
		return call2(lift2(f), evs, ts, rt)
	case func(float64, float64) float64:
		return call2(lift2(f), evs, ts, rt)
	case func(int32, int32) int32:
		return call2(lift2(f), evs, ts, rt)
	case func(int64, int32) int64:
		return call2(lift2(f), evs, ts, rt)
	case func(float64, int32) float64:
		return call2(lift2(f), evs, ts, rt)
	case func(funcs.Decimal, int32) funcs.Decimal:
		return call2(lift2(f), evs, ts, rt)
	case func(int32, int32) (int32, error):
		return call2(lift2err(f), evs, ts, rt)
	case func(int64, int64) (int64, error):
		return call2(lift2err(f), evs, ts, rt)
	case func(int64, string) (string, error):
		return call2(lift2err(f), evs, ts, rt)
	case func(time.Time, string) (string, error):
		return call2(lift2err(f), evs, ts, rt)
	case func(funcs.TimeUnit, time.Time) int64:
		return call2(func(unit string, t time.Time) (int64, bool, error) {
			u, ok := funcs.ParseTimeUnit(unit)
			if !ok {
				return 0, false, fmt.Errorf("unknown time unit %s", unit)
			}
			return f(u, t), true, nil
		}, evs, ts, rt)
	case func(string, string, bool) (time.Time, bool):
		return call2(func(s, p string) (time.Time, bool, error) { t, ok := f(s, p, full); return t, ok, nil }, evs, ts, rt)
	case func(string, string, string) string:
		return call3(lift3(f), evs, ts, rt)
	case func(string, string, int32) int32:
		return call3(lift3(f), evs, ts, rt)
	case func(string, int32, string) (string, bool):
		return call3(lift3ok(f), evs, ts, rt)
	case func(string, string, int32) (string, bool):
		return call3(lift3ok(f), evs, ts, rt)
	case func(string, string, int64) (string, bool):
		return call3(lift3ok(f), evs, ts, rt)
	case func(string, string, string) (string, bool):
		return call3(lift3ok(f), evs, ts, rt)
	case func(string, string, string) (bool, error):
		return call3(lift3err(f), evs, ts, rt)
	case func(funcs.TrimSide, string, string) string: // TRIM(chars FROM s), BOTH ends
		return call2(func(chars, s string) (string, bool, error) { return f(funcs.TrimBoth, chars, s), true, nil }, evs, ts, rt)
	case func(string, int64, int64, bool) (string, bool):
		return call3(func(s string, start, n int64) (string, bool, error) { r, ok := f(s, start, n, full); return r, ok, nil }, evs, ts, rt)
	}
	return adaptVariadic(fv, evs, ts, rt)
}

// adaptVariadic covers the variadic and the non-strict functions,
// which see every argument (pointers, nil for NULL, where NULL matters).
func adaptVariadic(fv any, evs []Eval, ts []types.Type, rt types.Type) Eval {
	vals := func(body func(vs []row.Value) (row.Value, error)) Eval {
		return func(in []row.Value) (row.Value, error) {
			vs, err := evalAll(evs, in)
			if err != nil {
				return row.Null(), err
			}
			return body(vs)
		}
	}
	str := func(v row.Value) string { return v.S }
	deref := func(p *row.Value) row.Value {
		if p == nil {
			return row.Null()
		}
		return *p
	}
	self := func(v row.Value) row.Value { return v }
	switch f := fv.(type) {
	case func(...string) string:
		return vals(func(vs []row.Value) (row.Value, error) {
			ss := make([]string, len(vs))
			for i, v := range vs {
				if v.IsNull() {
					return row.Null(), nil
				}
				ss[i] = v.S
			}
			return row.String(f(ss...)), nil
		})
	case func(*string, ...*string) (string, bool):
		return vals(func(vs []row.Value) (row.Value, error) {
			ps := ptrs(vs, str)
			r, ok := f(ps[0], ps[1:]...)
			if !ok {
				return row.Null(), nil
			}
			return row.String(r), nil
		})
	case func(...*row.Value) *row.Value: // COALESCE
		return vals(func(vs []row.Value) (row.Value, error) { return deref(f(ptrs(vs, self)...)), nil })
	case func(a, b *row.Value) *row.Value: // NULLIF
		return vals(func(vs []row.Value) (row.Value, error) {
			ps := ptrs(vs, self)
			return deref(f(ps[0], ps[1])), nil
		})
	case func(*bool, *row.Value, *row.Value) *row.Value: // IF
		return vals(func(vs []row.Value) (row.Value, error) {
			ps := ptrs(vs, self)
			c := ptrs(vs[:1], func(v row.Value) bool { return v.I != 0 })[0]
			return deref(f(c, ps[1], ps[2])), nil
		})
	case func(...*int64) *int64: // GREATEST, LEAST on integers, DECIMALs, TIMESTAMPs
		switch rt.Kind {
		case types.Int, types.BigInt, types.Decimal, types.Timestamp:
		default:
			return nil
		}
		k := rt.Kind
		return vals(func(vs []row.Value) (row.Value, error) {
			p := f(ptrs(vs, func(v row.Value) int64 { return v.I })...)
			if p == nil {
				return row.Null(), nil
			}
			return row.Value{K: k, I: *p}, nil
		})
	case func(...*float64) *float64:
		if rt.Kind != types.Double {
			return nil
		}
		return vals(func(vs []row.Value) (row.Value, error) {
			p := f(ptrs(vs, row.Value.Float)...)
			if p == nil {
				return row.Null(), nil
			}
			return row.Double(*p), nil
		})
	case func(...*string) *string:
		if rt.Kind != types.Varchar {
			return nil
		}
		return vals(func(vs []row.Value) (row.Value, error) {
			p := f(ptrs(vs, str)...)
			if p == nil {
				return row.Null(), nil
			}
			return row.String(*p), nil
		})
	}
	return nil
}
