package ast

// Query is a query expression: [WITH ...] body [ORDER BY ...] [LIMIT n]
// [OFFSET n].
type Query struct {
	Pos
	With    []CTE
	Body    SetExpr
	OrderBy []OrderItem
	Limit   Expr
	Offset  Expr
}

// CTE is one common table expression of a WITH clause: name [(cols)] AS
// (query).
type CTE struct {
	Pos
	Name    Ident
	Columns []Ident
	Query   *Query
}

// OrderItem is expr [ASC|DESC] [NULLS FIRST|LAST].
type OrderItem struct {
	Pos
	X     Expr
	Desc  bool
	Asc   bool   // ASC written explicitly
	Nulls string // "", FIRST or LAST
}

// Select is SELECT [DISTINCT] items [FROM from] [WHERE] [GROUP BY]
// [HAVING].
type Select struct {
	Pos
	Distinct bool
	Items    []SelectItem
	From     TableExpr // nil if absent
	Where    Expr
	GroupBy  []Expr
	Having   Expr
}

// SelectItem is expr [[AS] alias]; X may be a *Star.
type SelectItem struct {
	Pos
	X     Expr
	Alias *Ident
}

// SetOp is left UNION|INTERSECT|EXCEPT [ALL|DISTINCT] right.
type SetOp struct {
	Pos
	Op       string // UNION, INTERSECT or EXCEPT
	All      bool
	Distinct bool // DISTINCT written explicitly
	L, R     SetExpr
}

// Values is VALUES (a, b), (c, d).
type Values struct {
	Pos
	Rows [][]Expr
}

// ParenQuery is a query in parentheses in the place of a set operand:
// (SELECT ... ORDER BY ...) UNION ALL ....
type ParenQuery struct {
	Pos
	Query *Query
}

// TableName is a named table in FROM: name [FOR SYSTEM_TIME AS OF expr]
// [[AS] alias].
type TableName struct {
	Pos
	Name Name
	// SystemTime is the time of a temporal join (FOR SYSTEM_TIME AS OF),
	// nil if absent.
	SystemTime Expr
	Alias      *Alias
}

// DerivedTable is [LATERAL] (query) [[AS] alias].
type DerivedTable struct {
	Pos
	Lateral bool
	Query   *Query
	Alias   *Alias
}

// TableFunc is [LATERAL] TABLE(call) [[AS] alias], such as the window
// table function TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL
// '10' SECOND)).
type TableFunc struct {
	Pos
	Lateral bool
	Call    *Call
	Alias   *Alias
}

// Join kinds.
type JoinKind string

const (
	CommaJoin JoinKind = ","
	InnerJoin JoinKind = "INNER JOIN"
	LeftJoin  JoinKind = "LEFT JOIN"
	RightJoin JoinKind = "RIGHT JOIN"
	FullJoin  JoinKind = "FULL JOIN"
	CrossJoin JoinKind = "CROSS JOIN"
)

// Join is left kind right [ON cond | USING (cols)]. Plain JOIN is an
// InnerJoin; Written keeps how the kind was spelled (JOIN, INNER JOIN,
// LEFT OUTER JOIN) for printing.
type Join struct {
	Pos
	Kind    JoinKind
	Written string
	L, R    TableExpr
	On      Expr
	Using   []Ident
}

func (*Select) setNode()     {}
func (*SetOp) setNode()      {}
func (*Values) setNode()     {}
func (*ParenQuery) setNode() {}

func (*TableName) tableNode()    {}
func (*DerivedTable) tableNode() {}
func (*TableFunc) tableNode()    {}
func (*Join) tableNode()         {}
