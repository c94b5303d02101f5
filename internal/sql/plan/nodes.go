// Package plan binds parsed SQL (package ast) to a logical plan: a tree
// of relational nodes whose columns have types (package types) and
// whose expressions are bound (package expr). It keeps the catalog of a
// script's tables, views and functions, decides how each construct maps
// onto weir's operators (which join, which aggregation, which ranking),
// derives each node's changelog mode, and rewrites the tree (merged
// projections, columns pruned down to the source). Pure: the sql
// package turns the plan into a pipeline.
package plan

import (
	"github.com/weir-stream/weir/internal/sql/expr"
	"github.com/weir-stream/weir/internal/sql/types"
)

// Column is an output column of a node: its name, the name of the
// table (or alias) it is qualified by in the query, and its type.
type Column struct {
	Name  string
	Table string
	T     types.Type
	// Win marks the window_start and window_end columns of a window
	// table function or window aggregation, through projections that
	// pass them on; W is their windows. A join on both is a window
	// join, a GROUP BY of both a window aggregation.
	Win WinMark
	W   *Window
}

// WinMark tells window bound columns apart.
type WinMark uint8

// The marks.
const (
	NotWindow WinMark = iota
	WindowStart
	WindowEnd
)

// Node is a relational operator of the logical plan.
type Node interface {
	// Columns are the node's output columns, in order.
	Columns() []Column
	// Inputs are the node's input nodes.
	Inputs() []Node
	// Updating reports whether the node's output has changelog rows
	// that update or delete (-U, +U, -D), not only inserts.
	Updating() bool
}

// Scan reads a catalog table. Its output is the table's columns listed
// in Cols (indexes into Table.Columns), physical, metadata and computed
// alike; the sql package reads the physical and metadata ones from the
// source and computes the computed ones.
type Scan struct {
	Table *Table
	Cols  []int
	Alias string
}

// Calc projects and filters: rows of In for which Filter (if any) is
// TRUE, as the values of Proj.
type Calc struct {
	In     Node
	Filter expr.Expr
	Proj   []expr.Expr
	Names  []string
	Quals  []string
}

// WindowKind is the kind of a window table function.
type WindowKind string

// The window kinds.
const (
	Tumble   WindowKind = "TUMBLE"
	Hop      WindowKind = "HOP"
	Cumulate WindowKind = "CUMULATE"
	Session  WindowKind = "SESSION"
)

// Window is a window table function's windows: its kind, its time
// column (an index into its input's columns), and sizes in
// milliseconds. Keys partition session windows.
type Window struct {
	Kind     WindowKind
	TimeCol  int
	Size     int64 // TUMBLE, HOP, CUMULATE
	Slide    int64 // HOP
	Step     int64 // CUMULATE
	Gap      int64 // SESSION
	Offset   int64
	Keys     []int // SESSION's PARTITION BY
	ProcTime bool
	// Cascade, when positive, marks a window aggregation over the rows of
	// an earlier one, grouped by its window_start and window_end: the
	// windows are the earlier ones, of size Cascade, found by tumbling
	// windows of Size (the earlier slide) over their event time
	// (window_end - 1), so window_start is window_end - Cascade.
	Cascade int64
}

// WindowTVF is a window table function on its own: In's columns then
// window_start, window_end and window_time; HOP and CUMULATE give one
// row per window.
type WindowTVF struct {
	In     Node
	Window Window
}

// AggCall is one aggregate: a function of the catalog's aggregates, its
// argument column (-1 for COUNT(*)), DISTINCT, and its FILTER column
// (a BOOLEAN input column, -1 for none).
type AggCall struct {
	Fn       string
	Arg      int
	Distinct bool
	Filter   int
	In       types.Type // the argument's type
	T        types.Type // the result's type
	Name     string
}

// Aggregate groups In by Keys and computes Aggs. Its output is the key
// columns, then (for a window aggregation) window_start and window_end,
// then the aggregates. A window aggregation (Window set) is
// append-only; a group aggregation updates.
type Aggregate struct {
	In     Node
	Keys   []int
	Aggs   []AggCall
	Window *Window
	cols   []Column
}

// JoinKind is the kind of a join.
type JoinKind string

// The join kinds.
const (
	Inner JoinKind = "INNER"
	Left  JoinKind = "LEFT"
	Right JoinKind = "RIGHT"
	Full  JoinKind = "FULL"
)

// JoinStrategy says which of weir's joins carries out a join.
type JoinStrategy string

// The strategies.
const (
	// RegularJoin keeps both sides' rows in state, unbounded.
	RegularJoin JoinStrategy = "regular"
	// IntervalJoin keeps rows only as long as the time bounds need.
	IntervalJoin JoinStrategy = "interval"
	// WindowJoin joins rows of the same window of two windowed inputs.
	WindowJoin JoinStrategy = "window"
	// TemporalJoin joins each row of L with the version of R valid at
	// its time (FOR SYSTEM_TIME AS OF).
	TemporalJoin JoinStrategy = "temporal"
)

// Join joins L and R. Its output is L's columns then R's. LeftKeys and
// RightKeys are the equality conditions; Cond the rest (over the
// joined row), nil if none.
type Join struct {
	L, R      Node
	Kind      JoinKind
	Strategy  JoinStrategy
	LeftKeys  []int
	RightKeys []int
	Cond      expr.Expr
	// IntervalJoin: R's time column minus L's lies in [Lower, Upper]
	// milliseconds; LeftTime and RightTime index each side.
	LeftTime, RightTime int
	Lower, Upper        int64
	// WindowJoin: each side's window_start and window_end columns.
	LeftWindow, RightWindow [2]int
	// TemporalJoin: processing time (else event time of LeftTime).
	ProcTime bool
}

// SortKey is one ORDER BY column of a ranking.
type SortKey struct {
	Col        int
	Desc       bool
	NullsFirst bool
}

// Rank is ROW_NUMBER() OVER (PARTITION BY Partition ORDER BY Order)
// kept to the rows numbered Offset+1 to Limit; the row number is the
// last output column when RowNumber is set.
type Rank struct {
	In        Node
	Partition []int
	Order     []SortKey
	Limit     int64
	Offset    int64
	RowNumber bool
	Name      string
	// Window set: a window TopN, partitioned by the window columns too
	// and emitted when the window ends.
	Window *[2]int
}

// Union is UNION ALL of inputs with the same column types.
type Union struct {
	Ins []Node
}

// Values is a constant relation.
type Values struct {
	Rows [][]expr.Expr
	cols []Column
}

// Sink writes In into a catalog table.
type Sink struct {
	In    Node
	Table *Table
}
