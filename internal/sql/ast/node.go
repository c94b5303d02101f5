// Package ast is the syntax tree of weir's SQL dialect, Flink SQL as far
// as weir supports it: statements (DDL, INSERT, queries, SET, EXPLAIN),
// queries and expressions. The parser in internal/sql/parse builds it; a
// planner reads it.
//
// Every node records where it starts in the source (Pos). Every node
// prints itself back as SQL with String: parsing the printed text gives
// a tree equal to the original except for positions, which Dump shows
// (Dump leaves positions out). The package imports only the standard
// library.
package ast

import "fmt"

// Pos is a position in the source text, both 1-based; the column counts
// bytes. The zero Pos means "unknown".
type Pos struct {
	Line, Column int
}

// Position returns p; embedding Pos gives every node its Position method.
func (p Pos) Position() Pos { return p }

// String formats p as "line:column".
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Column) }

// Node is any node of the tree.
type Node interface {
	Position() Pos
	// String prints the node as SQL text that parses back to an equal
	// node.
	String() string
}

// Expr is a scalar expression.
type Expr interface {
	Node
	exprNode()
}

// Stmt is a top-level statement.
type Stmt interface {
	Node
	stmtNode()
}

// TableExpr is an item of a FROM clause: a table, a derived table, a
// table function or a join of two of them.
type TableExpr interface {
	Node
	tableNode()
}

// SetExpr is the body of a query: a SELECT, a set operation, VALUES or
// a parenthesized query.
type SetExpr interface {
	Node
	setNode()
}

// Ident is an identifier as written. Quoted identifiers (in backquotes)
// keep their case and may be keywords; plain ones are compared without
// regard to case by whoever resolves them.
type Ident struct {
	Pos
	Name   string
	Quoted bool
}

// Name is a possibly qualified name, such as catalog.db.table or
// table.column.field; it has at least one part.
type Name []Ident

// Position returns the position of the name's first part.
func (n Name) Position() Pos {
	if len(n) == 0 {
		return Pos{}
	}
	return n[0].Pos
}

// Alias is the name given to a table expression, with optional column
// names: AS b (x, y).
type Alias struct {
	Pos
	Name    Ident
	Columns []Ident
}
