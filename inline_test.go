package weir_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A job's package inlines the small functions of the operators'
// per-record paths into its instances of the operators (see inline.go):
// compiled with -m, testdata/inlinejob reports inlining each of them.
func TestJobPackageInlinesOperatorHelpers(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the compiler's inlining is read from `go build -gcflags=-m`: %v", err)
	}
	const job = module + "/testdata/inlinejob"
	var out bytes.Buffer
	cmd := exec.Command(goCmd, "build", "-o", os.DevNull, "-gcflags="+job+"=-m", "./testdata/inlinejob")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out.String())
	}
	inlined := map[string]bool{}
	for line := range strings.Lines(out.String()) {
		if _, callee, ok := strings.Cut(strings.TrimSpace(line), ": inlining call to "); ok {
			inlined[callee] = true
		}
	}
	for _, callee := range []string{
		"window.Window.MaxTimestamp",
		"window.cleanupTime",
		"keyed.(*Core[go.shape.string]).ShardOf",
		"state.(*Backend).Shard",
		"task.KeyGroup",
		"task.HashUint64",
	} {
		if !inlined[callee] {
			t.Errorf("%s is not inlined into the job's instances of the operators", callee)
		}
	}
}
