package ast_test

import (
	"testing"

	"github.com/weir-stream/weir/internal/sql/ast"
)

func TestDumpLeavesOutPositionsAndZeroFields(t *testing.T) {
	at := func(line, col int) ast.Pos { return ast.Pos{Line: line, Column: col} }
	e := &ast.Binary{Pos: at(1, 1), Op: "-",
		L: &ast.Ref{Pos: at(1, 1), Name: ast.Name{{Pos: at(1, 1), Name: "dateTime", Quoted: true}}},
		R: &ast.Interval{Pos: at(1, 14), Value: "4", Unit: "SECOND"}}
	moved := &ast.Binary{Pos: at(7, 3), Op: "-",
		L: &ast.Ref{Pos: at(7, 3), Name: ast.Name{{Pos: at(7, 3), Name: "dateTime", Quoted: true}}},
		R: &ast.Interval{Pos: at(8, 1), Value: "4", Unit: "SECOND"}}
	want := `Binary{Op:"-" L:Ref{Name:` + "`dateTime`" + `} R:Interval{Value:"4" Unit:"SECOND"}}`
	if got := ast.Dump(e); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if ast.Dump(moved) != ast.Dump(e) {
		t.Errorf("trees that differ only in positions dump differently:\n%s\n%s", ast.Dump(moved), ast.Dump(e))
	}
	if got, want := e.String(), "`dateTime` - INTERVAL '4' SECOND"; got != want {
		t.Errorf("printed %s, want %s", got, want)
	}
}

func TestIdentifiersAreQuotedWhenTheyMustBe(t *testing.T) {
	for _, tc := range []struct {
		id   ast.Ident
		want string
	}{
		{ast.Ident{Name: "bid"}, "bid"},
		{ast.Ident{Name: "bid", Quoted: true}, "`bid`"},
		{ast.Ident{Name: "from"}, "`from`"}, // reserved
		{ast.Ident{Name: "a b"}, "`a b`"},
		{ast.Ident{Name: "a`b"}, "`a``b`"},
		{ast.Ident{Name: "1a"}, "`1a`"},
		{ast.Ident{Name: "größe"}, "größe"},
	} {
		if got := tc.id.String(); got != tc.want {
			t.Errorf("%q printed as %s, want %s", tc.id.Name, got, tc.want)
		}
	}
	if got, want := ast.QuoteString("it's"), "'it''s'"; got != want {
		t.Errorf("QuoteString: got %s, want %s", got, want)
	}
}
