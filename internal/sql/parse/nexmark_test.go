package parse_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/weir-stream/weir/internal/sql/ast"
	"github.com/weir-stream/weir/internal/sql/parse"
)

// nexmarkVars fills the placeholder Nexmark's runner replaces outside
// strings; the others (${TPS}, ...) sit inside option values.
var nexmarkVars = map[string]string{"NEXMARK_TABLE": "datagen"}

func nexmarkFiles(t testing.TB) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "nexmark", "*.sql"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no Nexmark queries in testdata/nexmark: %v", err)
	}
	files := map[string]string{}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(path)] = string(b)
	}
	return files
}

// TestNexmarkQueriesParseAndRoundTrip parses every Nexmark file as
// published, prints it back and parses the print: the trees must be
// equal but for positions.
func TestNexmarkQueriesParseAndRoundTrip(t *testing.T) {
	for name, text := range nexmarkFiles(t) {
		t.Run(name, func(t *testing.T) {
			stmts, err := parse.Parse(parse.Substitute(text, nexmarkVars))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if len(stmts) == 0 {
				t.Fatal("no statements")
			}
			printed := ast.Script(stmts)
			again, err := parse.Parse(printed)
			if err != nil {
				t.Fatalf("parse of the printed text: %v\n%s", err, printed)
			}
			if got, want := ast.Dump(again), ast.Dump(stmts); got != want {
				t.Errorf("round trip changed the tree\nprinted: %s\ngot:  %s\nwant: %s", printed, got, want)
			}
		})
	}
}
