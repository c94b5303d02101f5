package expr

import (
	"errors"
	"fmt"
	"strings"

	"github.com/weir-stream/weir/internal/sql/funcs"
	"github.com/weir-stream/weir/internal/sql/types"
)

// ErrUnknownFunction reports a call of a function that is neither
// built in nor registered.
var ErrUnknownFunction = errors.New("unknown function")

// NewCall binds a call of the built-in function name (any case, aliases
// included): it picks the first overload of funcs.Lookup(name) whose
// arguments the call's can be passed to (see implicit), resolves the
// type variables Numeric and Any to the common type of the arguments
// declared so, and casts the arguments to the declared types. Trailing
// optional arguments may be left out; the compiled call supplies the
// function's default. TRIM takes (characters, string) and trims both
// ends (the planner binds LEADING and TRAILING trims of spaces as LTRIM
// and RTRIM), EXTRACT takes (unit, timestamp) with the unit as text. CAST and
// TRY_CAST are bound with NewCast.
func NewCall(name string, args []Expr) (Expr, error) {
	fn, ok := funcs.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w %s", ErrUnknownFunction, strings.ToUpper(name))
	}
	if fn.Name == "CAST" || fn.Name == "TRY_CAST" {
		return nil, fmt.Errorf("%s is bound with its target type (NewCast)", fn.Name)
	}
	for i, s := range fn.Signatures {
		if c, ok := bindSignature(fn, i, s, args); ok {
			decimalResult(c)
			return c, nil
		}
	}
	takes := make([]string, len(fn.Signatures))
	for i, s := range fn.Signatures {
		takes[i] = signatureText(s)
	}
	return nil, fmt.Errorf("%s takes %s, got %s", fn.Name, strings.Join(takes, " or "), exprTypes(args))
}

func bindSignature(fn *funcs.Function, idx int, s funcs.Signature, args []Expr) (*Call, bool) {
	n := len(args)
	if s.Variadic && n < len(s.Args) || !s.Variadic && (n < len(s.Args)-s.Optional || n > len(s.Args)) {
		return nil, false
	}
	declared := func(i int) funcs.Type { return s.Args[min(i, len(s.Args)-1)] }
	// Resolve the type variables.
	vars := map[funcs.Type]types.Type{}
	for i, a := range args {
		d := declared(i)
		if d != funcs.Numeric && d != funcs.Any {
			continue
		}
		t := a.Type()
		if d == funcs.Numeric && !t.IsNumeric() && t.Kind != types.Null {
			return nil, false
		}
		if prev, seen := vars[d]; seen {
			c, ok := types.Common(prev, t)
			if !ok {
				return nil, false
			}
			t = c
		}
		vars[d] = t
	}
	for v, t := range vars {
		if t.Kind == types.Null && v == funcs.Numeric {
			t = types.IntType
		}
		vars[v] = t.Plain().Nullable()
	}
	concrete := func(d funcs.Type) types.Type {
		if t, ok := vars[d]; ok {
			return t
		}
		return fromFuncs(d)
	}
	out := make([]Expr, n)
	notNull := fn.Strict && !fn.Nullable
	for i, a := range args {
		want := concrete(declared(i))
		if !implicit(a.Type(), want) {
			return nil, false
		}
		out[i] = castTo(a, want)
		notNull = notNull && a.Type().NotNull
	}
	t := concrete(s.Result)
	if t.Kind == types.Null {
		t = types.NullType
	}
	t.NotNull = notNull
	return &Call{Fn: fn, Sig: idx, Args: out, T: t}, true
}

// decimalResult sets the result type of the functions whose DECIMAL
// result differs from their argument's, as Flink types them: FLOOR and
// CEIL drop the scale, ROUND with a constant number of digits keeps
// those (types.RoundDecimal); with digits known only at run time ROUND
// keeps the argument's type.
func decimalResult(c *Call) {
	if c.T.Kind != types.Decimal {
		return
	}
	arg := c.Args[0].Type()
	switch c.Fn.Name {
	case "FLOOR", "CEIL":
		c.T = types.FloorCeilDecimal(arg)
	case "ROUND":
		d := int32(0)
		if len(c.Args) > 1 {
			v, ok := Fold(c.Args[1])
			if !ok || v.IsNull() {
				return
			}
			d = int32(v.I)
		}
		c.T = types.RoundDecimal(arg, d)
	default:
		return
	}
	c.T.NotNull = c.T.NotNull && arg.NotNull
}

// fromFuncs maps a concrete type of the registry to the SQL type.
func fromFuncs(t funcs.Type) types.Type {
	switch t {
	case funcs.Varchar:
		return types.VarcharType
	case funcs.Int:
		return types.IntType
	case funcs.Bigint:
		return types.BigIntType
	case funcs.Double:
		return types.DoubleType
	case funcs.Boolean:
		return types.BooleanType
	case funcs.TimestampT:
		return types.TimestampType
	case funcs.DecimalT:
		return types.DecimalOf(types.MaxPrecision, 18)
	}
	return types.NullType
}

func signatureText(s funcs.Signature) string {
	parts := make([]string, len(s.Args))
	for i, a := range s.Args {
		parts[i] = a.String()
		if i >= len(s.Args)-s.Optional {
			parts[i] = "[" + parts[i] + "]"
		}
	}
	if s.Variadic {
		parts = append(parts, "...")
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
