package ast

import "strings"

// reserved are the words that cannot stand as plain identifiers: where
// a name may follow an expression or a table (an alias without AS), or
// where an expression starts, they mean the clause or operator. They
// are a subset of Flink's reserved words; quoted in backquotes, any of
// them is an identifier. The parser and the printer share this list.
var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		ALL AND ANY AS ASC BETWEEN BY CASE CAST CONSTRAINT CREATE CROSS
		CURRENT DESC DESCRIBE DISTINCT DROP ELSE END ESCAPE EXCEPT EXISTS
		EXPLAIN EXTRACT FALSE FETCH FILTER FOR FROM FULL GROUP HAVING IN
		INNER INSERT INTERSECT INTERVAL INTO IS JOIN LATERAL LEFT LIKE
		LIMIT MATCH_RECOGNIZE MINUS NATURAL NOT NULL OFFSET ON OR ORDER
		OUTER OVER PARTITION RIGHT ROWS SELECT SET SOME TABLE THEN TRUE
		TABLESAMPLE UNION UNKNOWN USING VALUES WHEN WHERE WINDOW WITH`) {
		reserved[w] = true
	}
}

// Reserved reports whether word (in any case) is reserved: written
// without backquotes it is a keyword, never an identifier.
func Reserved(word string) bool { return reserved[strings.ToUpper(word)] }

// Precedences of operators, as in Flink (Apache Calcite's operator
// table): a higher number binds tighter. Binary operators are left
// associative.
const (
	PrecOr         = 22
	PrecAnd        = 24
	PrecNot        = 26 // prefix NOT
	PrecIs         = 28 // postfix IS [NOT] NULL|TRUE|FALSE|UNKNOWN
	PrecComparison = 30 // = <> != < <= > >= IS [NOT] DISTINCT FROM
	PrecPredicate  = 32 // [NOT] BETWEEN, [NOT] IN, [NOT] LIKE
	PrecAdditive   = 40 // + -
	PrecMultiply   = 60 // * / % ||
	PrecUnary      = 80 // prefix - +
	PrecPrimary    = 100
)

// BinaryPrecedence returns the precedence of a binary operator (upper
// case), or 0 if op is none.
func BinaryPrecedence(op string) int {
	switch op {
	case "OR":
		return PrecOr
	case "AND":
		return PrecAnd
	case "=", "<>", "!=", "<", "<=", ">", ">=", "IS DISTINCT FROM", "IS NOT DISTINCT FROM":
		return PrecComparison
	case "+", "-":
		return PrecAdditive
	case "*", "/", "%", "||":
		return PrecMultiply
	}
	return 0
}

// precedence returns how tightly e binds as an operand.
func precedence(e Expr) int {
	switch e := e.(type) {
	case *Binary:
		return BinaryPrecedence(e.Op)
	case *Unary:
		if e.Op == "NOT" {
			return PrecNot
		}
		return PrecUnary
	case *Is:
		return PrecIs
	case *Between, *In, *Like:
		return PrecPredicate
	}
	return PrecPrimary
}
