package funcs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLookupIgnoresCaseAndKnowsAliases(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"char_length", "CHAR_LENGTH"},
		{"Character_Length", "CHAR_LENGTH"},
		{"substr", "SUBSTRING"},
		{"CEILING", "CEIL"},
		{"regexp_extract", "REGEXP_EXTRACT"},
		{"date_format", "DATE_FORMAT"},
		{"Count_Char", "COUNT_CHAR"},
	} {
		f, ok := Lookup(tc.name)
		if !ok || f.Name != tc.want {
			t.Errorf("Lookup(%q) = %v, %v; want %s", tc.name, f, ok, tc.want)
		}
	}
	for _, name := range []string{"CURRENT_TIMESTAMP", "NOW", "RAND", "UUID", "", "NO_SUCH_FUNCTION"} {
		if _, ok := Lookup(name); ok {
			t.Errorf("Lookup(%q) found a function that is not here", name)
		}
	}
}

func TestRegistryDescribesEveryFunction(t *testing.T) {
	fs := Functions()
	if len(fs) != len(functions) {
		t.Fatalf("Functions() has %d entries, the catalog %d", len(fs), len(functions))
	}
	for i, f := range fs {
		if i > 0 && fs[i-1].Name >= f.Name {
			t.Errorf("Functions() is not sorted: %s before %s", fs[i-1].Name, f.Name)
		}
		if f.Name != strings.ToUpper(f.Name) || f.Doc == "" || len(f.Signatures) == 0 {
			t.Errorf("%s: needs an upper-case name, a description and a signature", f.Name)
		}
		for _, s := range f.Signatures {
			if s.Result == 0 || s.Optional > len(s.Args) || s.Go == "" {
				t.Errorf("%s: malformed signature %+v", f.Name, s)
			}
		}
	}
	sub, _ := Lookup("SUBSTRING")
	if s := sub.Signatures[0]; len(s.Args) != 3 || s.Optional != 1 || s.Result != Varchar || !sub.Strict || !sub.Nullable {
		t.Errorf("SUBSTRING is described as %+v %+v", sub, s)
	}
	if Varchar.String() != "VARCHAR" || TimestampT.String() != "TIMESTAMP(3)" {
		t.Error("type names")
	}
}

// packageFiles parses the package's non-test files.
func packageFiles(t *testing.T) []*ast.File {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

func TestRegistryNamesFunctionsThatExist(t *testing.T) {
	declared := map[string]bool{}
	for _, f := range packageFiles(t) {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				declared[fd.Name.Name] = true
			}
		}
	}
	for _, f := range functions {
		for _, s := range f.Signatures {
			for _, name := range strings.Fields(s.Go) {
				if !declared[name] || !ast.IsExported(name) {
					t.Errorf("%s names %s, which is not an exported function of the package", f.Name, name)
				}
			}
		}
	}
}

// TestNothingReadsTheClock holds the package to its contract: package
// time only for values, never the clock or the local zone.
func TestNothingReadsTheClock(t *testing.T) {
	banned := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
		"AfterFunc": true, "Tick": true, "NewTicker": true, "NewTimer": true, "Local": true, "LoadLocation": true}
	for _, f := range packageFiles(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" && banned[sel.Sel.Name] {
				t.Errorf("%s uses time.%s", f.Name.Name, sel.Sel.Name)
			}
			return true
		})
	}
}
