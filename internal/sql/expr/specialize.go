package expr

import (
	"fmt"

	"github.com/weir-stream/weir/internal/sql/funcs"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// specialize compiles the calls whose pattern argument is a constant
// once, as package funcs intends (CompileRegexp, CompileLike,
// CompileDateFormat), instead of compiling the pattern on every row. It
// returns nil when the call is not such a one. An invalid constant
// pattern is NULL where Flink answers NULL for it (the regular
// expression functions) and an error of the query's compilation where
// Flink fails (LIKE, DATE_FORMAT). With own (CompileOwned), DATE_FORMAT
// keeps the text of the last period it formatted.
func specialize(e *Call, goName string, evs []Eval, ts []types.Type, own bool) (Eval, error) {
	constant := func(i int) (string, bool) {
		if i >= len(e.Args) {
			if d := optionalDefaults[goName]; goName == "Like" && len(d) > 0 {
				return d[0].S, true
			}
			return "", false
		}
		v, ok := Fold(e.Args[i])
		return v.S, ok && !v.IsNull()
	}
	pick := func(is ...int) ([]Eval, []types.Type) {
		var es []Eval
		var tt []types.Type
		for _, i := range is {
			es, tt = append(es, evs[i]), append(tt, ts[i])
		}
		return es, tt
	}
	null := constEval(row.Null())
	switch goName {
	case "RegexpExtract", "RegexpReplace", "RegexpMatch":
		pattern, ok := constant(1)
		if !ok {
			return nil, nil
		}
		re, err := funcs.CompileRegexp(pattern)
		switch {
		case goName == "RegexpMatch" && (err != nil || pattern == ""):
			es, tt := pick(0)
			return call1(func(string) (bool, bool, error) { return false, true, nil }, es, tt, e.T), nil
		case err != nil:
			return null, nil
		case goName == "RegexpExtract":
			es, tt := pick(0, 2)
			return call2(lift2ok(re.Extract), es, tt, e.T), nil
		case goName == "RegexpReplace":
			es, tt := pick(0, 2)
			return call2(func(s, r string) (string, bool, error) { return re.Replace(s, r), true, nil }, es, tt, e.T), nil
		}
		es, tt := pick(0)
		return call1(lift1(re.Find), es, tt, e.T), nil
	case "Like":
		pattern, ok1 := constant(1)
		escape, ok2 := constant(2)
		if !ok1 || !ok2 {
			return nil, nil
		}
		p, err := funcs.CompileLike(pattern, escape)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e, err)
		}
		es, tt := pick(0)
		return call1(lift1(p.Match), es, tt, e.T), nil
	case "DateFormatTimestamp":
		pattern, ok := constant(1)
		if !ok {
			return nil, nil
		}
		f, err := funcs.CompileDateFormat(pattern)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e, err)
		}
		es, tt := pick(0)
		if own {
			return call1(lift1(f.Memo().Format), es, tt, e.T), nil
		}
		return call1(lift1(f.Format), es, tt, e.T), nil
	}
	return nil, nil
}
