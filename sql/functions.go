package sql

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/funcs"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

// registry holds the scalar functions registered from Go: by the name
// SQL calls them, and by the class name CREATE FUNCTION ... AS 'class'
// binds a name to.
var registry = struct {
	mu      sync.Mutex
	funcs   map[string]*expr.ScalarFunc
	classes map[string]*expr.ScalarFunc
}{funcs: map[string]*expr.ScalarFunc{}, classes: map[string]*expr.ScalarFunc{}}

// RegisterFunction makes fn callable from SQL as name (case-insensitive).
// fn is a Go function whose parameters and result are of the types SQL
// values map to: string (VARCHAR), int32 (INT), int64 (BIGINT), float64
// (DOUBLE), bool (BOOLEAN), time.Time (TIMESTAMP(3), UTC); it may return
// an error as a second result, which fails the query. A NULL argument
// makes the result NULL without a call. Register at start-up, before
// Parse; a script's calls then type-check against fn's signature (with
// the implicit casts SQL applies).
func RegisterFunction(name string, fn any) error {
	f, err := scalarFunc(name, fn)
	if err != nil {
		return err
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	key := strings.ToUpper(name)
	if _, dup := registry.funcs[key]; dup {
		return fmt.Errorf("sql: function %s registered twice", name)
	}
	registry.funcs[key] = f
	return nil
}

// RegisterClass registers fn (as RegisterFunction takes it) under a
// class name, for scripts that bind a name to it with CREATE FUNCTION
// name AS 'class' — the form Flink scripts use for Java functions.
func RegisterClass(class string, fn any) error {
	f, err := scalarFunc(class, fn)
	if err != nil {
		return err
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if _, dup := registry.classes[class]; dup {
		return fmt.Errorf("sql: class %s registered twice", class)
	}
	registry.classes[class] = f
	return nil
}

func init() {
	// Nexmark q14's user function, under the class name its script
	// gives (nexmark/nexmark's CountChar).
	if err := RegisterClass("com.github.nexmark.flink.udf.CountChar", funcs.CountChar); err != nil {
		panic(err)
	}
}

var (
	errorType = reflect.TypeFor[error]()
	timeType  = reflect.TypeFor[time.Time]()
)

// goType returns the SQL type of a Go type and its conversions.
func goType(t reflect.Type) (types.Type, func(row.Value) reflect.Value, func(reflect.Value) row.Value, bool) {
	switch {
	case t == timeType:
		return types.TimestampType,
			func(v row.Value) reflect.Value { return reflect.ValueOf(time.UnixMilli(v.I).UTC()) },
			func(v reflect.Value) row.Value { return row.Timestamp(v.Interface().(time.Time).UnixMilli()) }, true
	}
	switch t.Kind() {
	case reflect.String:
		return types.VarcharType,
			func(v row.Value) reflect.Value { return reflect.ValueOf(v.S).Convert(t) },
			func(v reflect.Value) row.Value { return row.String(v.String()) }, true
	case reflect.Int64:
		return types.BigIntType,
			func(v row.Value) reflect.Value { return reflect.ValueOf(v.I).Convert(t) },
			func(v reflect.Value) row.Value { return row.BigInt(v.Int()) }, true
	case reflect.Int32:
		return types.IntType,
			func(v row.Value) reflect.Value { return reflect.ValueOf(int32(v.I)).Convert(t) },
			func(v reflect.Value) row.Value { return row.Int(int32(v.Int())) }, true
	case reflect.Float64:
		return types.DoubleType,
			func(v row.Value) reflect.Value { return reflect.ValueOf(v.Float()).Convert(t) },
			func(v reflect.Value) row.Value { return row.Double(v.Float()) }, true
	case reflect.Bool:
		return types.BooleanType,
			func(v row.Value) reflect.Value { return reflect.ValueOf(v.Bool()).Convert(t) },
			func(v reflect.Value) row.Value { return row.Bool(v.Bool()) }, true
	}
	return types.Type{}, nil, nil, false
}

// scalarFunc turns a Go function into a SQL scalar function.
func scalarFunc(name string, fn any) (*expr.ScalarFunc, error) {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return nil, fmt.Errorf("sql: function %s: %T is not a function", name, fn)
	}
	t := v.Type()
	if t.IsVariadic() || t.NumOut() < 1 || t.NumOut() > 2 || t.NumOut() == 2 && t.Out(1) != errorType {
		return nil, fmt.Errorf("sql: function %s: %s must take fixed parameters and return a value and optionally an error", name, t)
	}
	f := &expr.ScalarFunc{Name: name, Strict: true}
	var in []func(row.Value) reflect.Value
	for i := range t.NumIn() {
		st, conv, _, ok := goType(t.In(i))
		if !ok {
			return nil, fmt.Errorf("sql: function %s: parameter %d has type %s, which no SQL type maps to (string, int32, int64, float64, bool, time.Time)", name, i+1, t.In(i))
		}
		f.Args = append(f.Args, st)
		in = append(in, conv)
	}
	rt, _, out, ok := goType(t.Out(0))
	if !ok {
		return nil, fmt.Errorf("sql: function %s: result type %s maps to no SQL type", name, t.Out(0))
	}
	f.Result = rt
	fails := t.NumOut() == 2
	f.Eval = func(args []row.Value) (row.Value, error) {
		vals := make([]reflect.Value, len(args))
		for i, a := range args {
			vals[i] = in[i](a)
		}
		res := v.Call(vals)
		if fails && !res[1].IsNil() {
			return row.Value{}, fmt.Errorf("function %s: %w", name, res[1].Interface().(error))
		}
		return out(res[0]), nil
	}
	return f, nil
}
