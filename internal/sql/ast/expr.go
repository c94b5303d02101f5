package ast

// Literal kinds.
type LitKind int

const (
	LitNumber    LitKind = iota + 1 // Text is the number as written: 10, 0.908, 1e3
	LitString                       // Text is the string's value, quotes removed and '' undone
	LitBool                         // Text is TRUE or FALSE
	LitNull                         // Text is NULL
	LitTimestamp                    // TIMESTAMP '...'; Text is the string's value
	LitDate                         // DATE '...'
	LitTime                         // TIME '...'
)

// Literal is a constant other than an interval.
type Literal struct {
	Pos
	Kind LitKind
	Text string
}

// Interval is an interval literal: INTERVAL '10' SECOND, INTERVAL '1:30'
// HOUR TO MINUTE. Units are upper case as written (SECOND or SECONDS).
type Interval struct {
	Pos
	Negative bool // INTERVAL -'10' SECOND
	Value    string
	Unit     string
	ToUnit   string // empty unless "unit TO unit"
}

// Ref is a reference to a column, or to a field of a column: a, t.a,
// person.id, t.person.id. Which parts name a table is for the planner to
// decide.
type Ref struct {
	Pos
	Name Name
}

// Star is * or qualifier.* in a select list.
type Star struct {
	Pos
	Qualifier Name // nil for a bare *
}

// Unary is a prefix operator: -x, +x, NOT x. Op is "-", "+" or "NOT".
type Unary struct {
	Pos
	Op string
	X  Expr
}

// Binary is an infix operator: arithmetic (+ - * / %), concatenation
// (||), comparison (= <> != < <= > >=, IS DISTINCT FROM, IS NOT
// DISTINCT FROM) or logic (AND, OR). Op is upper case.
type Binary struct {
	Pos
	Op   string
	L, R Expr
}

// Is is x IS [NOT] NULL, TRUE, FALSE or UNKNOWN.
type Is struct {
	Pos
	X    Expr
	Not  bool
	What string // NULL, TRUE, FALSE or UNKNOWN
}

// Between is x [NOT] BETWEEN lo AND hi.
type Between struct {
	Pos
	X, Lo, Hi Expr
	Not       bool
}

// In is x [NOT] IN (list) or x [NOT] IN (query); exactly one of List
// and Query is set.
type In struct {
	Pos
	X     Expr
	Not   bool
	List  []Expr
	Query *Query
}

// Like is x [NOT] LIKE pattern [ESCAPE escape].
type Like struct {
	Pos
	X, Pattern Expr
	Escape     Expr // nil if absent
	Not        bool
}

// Exists is EXISTS (query).
type Exists struct {
	Pos
	Query *Query
}

// Subquery is a scalar subquery: (SELECT ...).
type Subquery struct {
	Pos
	Query *Query
}

// Call is a function call. Name is as written (case kept). Star marks
// COUNT(*). Distinct marks COUNT(DISTINCT x). Filter is the aggregate's
// FILTER (WHERE cond), Over its window. NoParens marks niladic functions
// written without parentheses (CURRENT_TIMESTAMP).
type Call struct {
	Pos
	Name     Name
	Distinct bool
	Star     bool
	Args     []Expr
	Filter   Expr
	Over     *Window
	NoParens bool
}

// NamedArg is a named argument of a call: DATA => TABLE bid.
type NamedArg struct {
	Pos
	Name  Ident
	Value Expr
}

// TableArg is a table passed to a table function: TABLE bid, or TABLE
// bid PARTITION BY bidder, or PARTITION BY (a, b) (SESSION windows).
// PartitionBy holds *Ref.
type TableArg struct {
	Pos
	Name        Name
	PartitionBy []Expr
}

// Descriptor names the time attribute of a window table function:
// DESCRIPTOR(dateTime).
type Descriptor struct {
	Pos
	Columns []Ident
}

// Cast is CAST(x AS type), or TRY_CAST when Try is set.
type Cast struct {
	Pos
	X    Expr
	Type *DataType
	Try  bool
}

// Extract is EXTRACT(unit FROM x); Unit is upper case.
type Extract struct {
	Pos
	Unit string
	X    Expr
}

// Case is CASE [operand] WHEN ... THEN ... [ELSE ...] END. Operand is nil
// for a searched CASE.
type Case struct {
	Pos
	Operand Expr
	Whens   []When
	Else    Expr
}

// When is one WHEN cond THEN result of a CASE.
type When struct {
	Pos
	Cond, Result Expr
}

// Constructor is ROW(a, b), ARRAY[a, b] or MAP[k, v, ...]; Kind is ROW,
// ARRAY or MAP.
type Constructor struct {
	Pos
	Kind  string
	Elems []Expr
}

// Index is x[i]: an array element or a map value.
type Index struct {
	Pos
	X, Index Expr
}

// Window is the window of an OVER clause: either a reference to a named
// window (Ref) or a specification.
type Window struct {
	Pos
	Ref         *Ident
	PartitionBy []Expr
	OrderBy     []OrderItem
	Frame       *Frame
}

// Frame is ROWS|RANGE BETWEEN start AND end, or ROWS|RANGE start (End
// nil).
type Frame struct {
	Pos
	Unit  string // ROWS or RANGE
	Start Bound
	End   *Bound
}

// Bound kinds of a window frame.
type BoundKind int

const (
	UnboundedPreceding BoundKind = iota + 1
	Preceding                    // Offset PRECEDING
	CurrentRow
	Following // Offset FOLLOWING
	UnboundedFollowing
)

// Bound is one end of a window frame.
type Bound struct {
	Pos
	Kind   BoundKind
	Offset Expr // for Preceding and Following
}

func (*Literal) exprNode()     {}
func (*Interval) exprNode()    {}
func (*Ref) exprNode()         {}
func (*Star) exprNode()        {}
func (*Unary) exprNode()       {}
func (*Binary) exprNode()      {}
func (*Is) exprNode()          {}
func (*Between) exprNode()     {}
func (*In) exprNode()          {}
func (*Like) exprNode()        {}
func (*Exists) exprNode()      {}
func (*Subquery) exprNode()    {}
func (*Call) exprNode()        {}
func (*NamedArg) exprNode()    {}
func (*TableArg) exprNode()    {}
func (*Descriptor) exprNode()  {}
func (*Cast) exprNode()        {}
func (*Extract) exprNode()     {}
func (*Case) exprNode()        {}
func (*Constructor) exprNode() {}
func (*Index) exprNode()       {}
