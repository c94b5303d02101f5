package weir_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is this module's path: the root package's import path.
const module = "github.com/weir-stream/weir"

// listedPackage is what `go list -json` says of one package.
type listedPackage struct {
	ImportPath string
	Imports    []string // direct imports, test files excluded
	Deps       []string // every package it depends on, test files excluded
}

// listModule lists the module's packages with their imports.
func listModule(t *testing.T) map[string]listedPackage {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the layout rules are read from `go list`: %v", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(goCmd, "list", "-json=ImportPath,Imports,Deps", module+"/...")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]listedPackage{}
	dec := json.NewDecoder(&stdout)
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list's output: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	if _, ok := pkgs[module]; !ok {
		t.Fatalf("go list did not list the root package %s", module)
	}
	return pkgs
}

// under reports whether path is dir (a package path) or below it.
func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// standard reports whether path is a package of the standard library
// (its first element has no dot, as the go command decides).
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// banned returns, for each import of p that is banned or depends on a
// banned package, a sentence naming it.
func banned(pkgs map[string]listedPackage, p listedPackage, isBanned func(string) bool) []string {
	var out []string
	for _, imp := range p.Imports {
		if isBanned(imp) {
			out = append(out, p.ImportPath+" imports "+imp)
			continue
		}
		if i := slices.IndexFunc(pkgs[imp].Deps, isBanned); i >= 0 {
			out = append(out, p.ImportPath+" imports "+imp+", which depends on "+pkgs[imp].Deps[i])
		}
	}
	return out
}

// TestLayout checks the import rules of docs/architecture.md on the
// packages' own imports (a package's tests may import more: an
// internal package's tests may build pipelines with the root package).
func TestLayout(t *testing.T) {
	pkgs := listModule(t)
	paths := make([]string, 0, len(pkgs))
	for path := range pkgs {
		paths = append(paths, path)
	}
	slices.Sort(paths)

	// Rule "internal below root": no package under internal/ imports
	// the root package or the command line, directly or through another
	// package; internal/ holds what the API is built on.
	aboveInternal := func(imp string) bool { return imp == module || under(imp, module+"/cli") }
	for _, path := range paths {
		if under(path, module+"/internal") {
			for _, v := range banned(pkgs, pkgs[path], aboveInternal) {
				t.Errorf("rule internal below root: %s", v)
			}
		}
	}

	// Rule "operators know no job": a package under internal/operator
	// depends on neither the engine that runs jobs nor the cluster,
	// directly or not; an operator is built and driven by a task.
	jobLevel := func(imp string) bool {
		return under(imp, module+"/internal/engine") || under(imp, module+"/internal/cluster")
	}
	for _, path := range paths {
		if under(path, module+"/internal/operator") {
			for _, v := range banned(pkgs, pkgs[path], jobLevel) {
				t.Errorf("rule operators know no job: %s", v)
			}
		}
	}

	// Rule "pure cores stay pure": the protocol packages decide and do
	// nothing else. They import no clock, no I/O, no goroutine machinery
	// and, of this module, only the shared vocabulary; their shells (the
	// engine, the task) feed them and carry out what they answer.
	pure := []string{"checkpoint", "input", "plan", "dataflow", "determinant", "recovery"}
	impure := []string{"time", "os", "net", "sync", "context", "runtime", "io", "syscall"}
	for _, name := range pure {
		path := module + "/internal/" + name
		for _, imp := range pkgs[path].Imports {
			if slices.ContainsFunc(impure, func(p string) bool { return under(imp, p) }) ||
				under(imp, module) && imp != module+"/internal/dataflow" {
				t.Errorf("rule pure cores stay pure: %s imports %s", path, imp)
			}
		}
	}

	// Rule "the SQL front end is pure": the packages under internal/sql
	// (the syntax tree, the parser, the scalar functions) turn text into
	// values and nothing else. They import no clock, I/O or goroutine
	// machinery and, of this module, only each other. The functions may
	// import package time for time.Time, the value of a TIMESTAMP; they
	// never read the clock (their own test checks that). The compiled
	// expressions may too, to hand TIMESTAMP arguments to those
	// functions as time.Time values; they never read the clock either.
	for _, path := range paths {
		if !under(path, module+"/internal/sql") {
			continue
		}
		for _, imp := range pkgs[path].Imports {
			if imp == "time" && (path == module+"/internal/sql/funcs" || path == module+"/internal/sql/expr") {
				continue
			}
			if slices.ContainsFunc(impure, func(p string) bool { return under(imp, p) }) ||
				!standard(imp) && !under(imp, module+"/internal/sql") {
				t.Errorf("rule the SQL front end is pure: %s imports %s", path, imp)
			}
		}
	}

	// Rule "failover parts are leaves": upstream backup, the determinant
	// log and the active standby's input log know nothing of the task
	// that uses them; of this module they import only stream elements
	// and the shared vocabulary.
	leafAllowed := []string{module + "/internal/exchange", module + "/internal/dataflow"}
	for _, name := range []string{"backup", "determinant", "standbylog"} {
		path := module + "/internal/" + name
		for _, imp := range pkgs[path].Imports {
			if under(imp, module) && !slices.Contains(leafAllowed, imp) {
				t.Errorf("rule failover parts are leaves: %s imports %s", path, imp)
			}
		}
	}

	// Rule "the API is not the command line": the root package depends
	// on no command-line package (cli, pflag, cobra), directly or not.
	commandLine := func(imp string) bool {
		return under(imp, module+"/cli") || under(imp, "github.com/spf13/pflag") || under(imp, "github.com/spf13/cobra")
	}
	for _, v := range banned(pkgs, pkgs[module], commandLine) {
		t.Errorf("rule the API is not the command line: %s", v)
	}

	// Rule "the plugin API stands alone": package connector imports
	// only the standard library, so a connector pulls in nothing of the
	// engine.
	for _, imp := range pkgs[module+"/connector"].Imports {
		if !standard(imp) {
			t.Errorf("rule the plugin API stands alone: %s/connector imports %s", module, imp)
		}
	}

	// Rule "connectors use the plugin API only": a package under
	// connectors/ imports, of this module, only connector and
	// connectors/format; besides them the standard library and its
	// system's client library. The object-store connector also imports
	// internal/blob, whose S3 client set-up it shares with the
	// checkpoint store.
	allowed := []string{module + "/connector", module + "/connectors/format"}
	for _, path := range paths {
		if !under(path, module+"/connectors") {
			continue
		}
		for _, imp := range pkgs[path].Imports {
			if path == module+"/connectors/objstore" && imp == module+"/internal/blob" {
				continue
			}
			if under(imp, module) && !slices.Contains(allowed, imp) {
				t.Errorf("rule connectors use the plugin API only: %s imports %s", path, imp)
			}
		}
	}
}
