package ast

// DataType is a type as written in DDL or CAST: BIGINT, TIMESTAMP(3),
// DECIMAL(23, 3), ROW<a BIGINT, b VARCHAR>, ARRAY<INT>, MAP<K, V>, with
// NOT NULL if written. Name is upper case unless quoted.
type DataType struct {
	Pos
	Name   string
	Params []string // numbers in parentheses: TIMESTAMP(3), DECIMAL(23, 3)
	// Suffix is a multi-word tail of the name: WITH LOCAL TIME ZONE,
	// WITHOUT TIME ZONE.
	Suffix  string
	Fields  []Field   // ROW
	Elem    *DataType // ARRAY, MULTISET
	Key     *DataType // MAP
	Value   *DataType // MAP
	Angle   bool      // ROW<...> rather than ROW(...)
	NotNull bool
	Null    bool // NULL written explicitly
}

// Field is a field of a ROW type: name type ['description'].
type Field struct {
	Pos
	Name    Ident
	Type    *DataType
	Comment *string
}

// ColumnKind tells the kinds of CREATE TABLE columns apart.
type ColumnKind int

const (
	Physical ColumnKind = iota + 1 // name type
	Computed                       // name AS expr
	Metadata                       // name type METADATA [FROM 'key'] [VIRTUAL]
)

// Column is a column of CREATE TABLE.
type Column struct {
	Pos
	Name        Ident
	Kind        ColumnKind
	Type        *DataType // Physical, Metadata
	Expr        Expr      // Computed
	MetadataKey *string   // Metadata: FROM 'key'
	Virtual     bool      // Metadata
	PrimaryKey  bool      // name type PRIMARY KEY NOT ENFORCED
	Comment     *string
}

// Watermark is WATERMARK FOR column AS expr.
type Watermark struct {
	Pos
	Column Name
	Expr   Expr
}

// PrimaryKey is [CONSTRAINT name] PRIMARY KEY (cols) NOT ENFORCED.
type PrimaryKey struct {
	Pos
	Constraint *Ident
	Columns    []Ident
}

// Option is one 'key' = 'value' of a WITH clause or of SET.
type Option struct {
	Pos
	Key, Value string
}

// CreateTable is CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name (...)
// [COMMENT '...'] [PARTITIONED BY (...)] WITH (...) [AS query].
type CreateTable struct {
	Pos
	Temporary   bool
	IfNotExists bool
	Name        Name
	Columns     []Column
	Watermarks  []Watermark
	PrimaryKey  *PrimaryKey
	Comment     *string
	PartitionBy []Ident
	Options     []Option
	As          *Query
}

// CreateView is CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(cols)] AS
// query.
type CreateView struct {
	Pos
	Temporary   bool
	IfNotExists bool
	Name        Name
	Columns     []Ident
	Query       *Query
}

// CreateFunction is CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS]
// name AS 'class' [LANGUAGE lang].
type CreateFunction struct {
	Pos
	Temporary   bool
	System      bool
	IfNotExists bool
	Name        Name
	Class       string
	Language    string // upper case; empty if not written
}

// Insert is INSERT INTO|OVERWRITE name [(cols)] query.
type Insert struct {
	Pos
	Overwrite bool
	Table     Name
	Columns   []Ident
	Query     *Query
}

// QueryStmt is a query on its own.
type QueryStmt struct {
	Pos
	Query *Query
}

// Set is SET ['key' = 'value']; Option is nil for a bare SET.
type Set struct {
	Pos
	Option *Option
}

// Reset is RESET ['key'].
type Reset struct {
	Pos
	Key *string
}

// Explain is EXPLAIN [PLAN FOR | detail, ...] stmt.
type Explain struct {
	Pos
	PlanFor bool
	Details []string // upper case: ESTIMATED_COST, CHANGELOG_MODE, ...
	Stmt    Stmt
}

func (*CreateTable) stmtNode()    {}
func (*CreateView) stmtNode()     {}
func (*CreateFunction) stmtNode() {}
func (*Insert) stmtNode()         {}
func (*QueryStmt) stmtNode()      {}
func (*Set) stmtNode()            {}
func (*Reset) stmtNode()          {}
func (*Explain) stmtNode()        {}
