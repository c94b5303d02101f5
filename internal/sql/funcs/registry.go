package funcs

import (
	"slices"
	"strings"
)

// Type is a SQL type as the Registry describes arguments and results.
// Numeric and Any are type variables: every argument declared Numeric
// (or Any) in one signature takes the common type of the actual
// arguments, and a result declared so has that type.
type Type int

// The types of the Registry.
const (
	Varchar    Type = iota + 1 // VARCHAR / STRING: string
	Int                        // INT: int32
	Bigint                     // BIGINT: int64
	Double                     // DOUBLE: float64
	DecimalT                   // DECIMAL(p, s): Decimal
	Boolean                    // BOOLEAN: bool
	TimestampT                 // TIMESTAMP(3): time.Time in UTC
	Numeric                    // type variable over INT, BIGINT, DOUBLE, DECIMAL
	Any                        // type variable over every type
)

var typeNames = [...]string{"", "VARCHAR", "INT", "BIGINT", "DOUBLE", "DECIMAL", "BOOLEAN", "TIMESTAMP(3)", "NUMERIC", "ANY"}

func (t Type) String() string { return typeNames[t] }

// Signature is one overload of a function.
type Signature struct {
	// Args are the argument types in order.
	Args []Type
	// Optional is how many of the trailing Args a call may leave out.
	Optional int
	// Variadic says the last of Args may repeat any number of times
	// (including zero more).
	Variadic bool
	// Result is the result type.
	Result Type
	// Go names the Go functions implementing the overload, separated by
	// spaces (one per argument type where the implementation is split
	// by type).
	Go string
}

// Function describes one SQL function.
type Function struct {
	// Name is the SQL name, upper case.
	Name string
	// Aliases are other names of the same function.
	Aliases []string
	// Signatures are its overloads.
	Signatures []Signature
	// Strict says a NULL argument makes the result NULL: the caller
	// answers NULL without calling, and the Go function takes values.
	// A function that is not strict takes pointers.
	Strict bool
	// Nullable says the result may be NULL even when no argument is:
	// the Go function returns an extra bool (or a pointer).
	Nullable bool
	// Fails says the function can fail the query at run time: the Go
	// function returns an error.
	Fails bool
	// Doc is a one-line description.
	Doc string
}

// sig is shorthand for a Signature without optional or repeated
// arguments.
func sig(goName string, result Type, args ...Type) Signature {
	return Signature{Args: args, Result: result, Go: goName}
}

// withOptional returns s with its last n arguments optional.
func (s Signature) withOptional(n int) Signature { s.Optional = n; return s }

// variadic returns s with its last argument repeating.
func (s Signature) variadic() Signature { s.Variadic = true; return s }

var registry = func() map[string]*Function {
	m := map[string]*Function{}
	for _, f := range functions {
		for _, name := range append([]string{f.Name}, f.Aliases...) {
			if _, dup := m[name]; dup {
				panic("funcs: function registered twice: " + name)
			}
			m[name] = f
		}
	}
	return m
}()

// Lookup returns the function named name, ignoring case, or false.
func Lookup(name string) (*Function, bool) {
	f, ok := registry[strings.ToUpper(name)]
	return f, ok
}

// Functions returns every function, sorted by name.
func Functions() []*Function {
	out := slices.Clone(functions)
	slices.SortFunc(out, func(a, b *Function) int { return strings.Compare(a.Name, b.Name) })
	return out
}
