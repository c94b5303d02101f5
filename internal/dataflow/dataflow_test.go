package dataflow

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSubtaskIDString pins the form error messages, logs and the scripted
// tests of the checkpoint coordinator print.
func TestSubtaskIDString(t *testing.T) {
	if got, want := (SubtaskID{Vertex: 2, Subtask: 10}).String(), "2.10"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}

// TestPackageIsPlain keeps the package a vocabulary: it may import only the
// few standard packages its formatting needs, and starts no goroutines.
func TestPackageIsPlain(t *testing.T) {
	allowed := map[string]bool{"fmt": true, "math": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		checked++
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[path] {
				t.Errorf("%s imports %q; the package may import only %v", name, path, allowed)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if _, ok := n.(*ast.GoStmt); ok {
				t.Errorf("%s starts a goroutine", name)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no source files checked")
	}
}
