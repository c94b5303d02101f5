package codec

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// noescape calls nothing between hiding its pointer as a uintptr and
// returning it, also in the race detector's builds, which instrument
// conversions and memory accesses with calls: a call there can grow the
// goroutine's stack, after which the pointer it returns points into the
// freed old stack (found as "fatal error: found bad pointer in Go heap"
// under -race in an encoder run from a subtask's goroutine). Read from
// the race build's assembly.
func TestNoescapeCallsNothingInTheRaceDetectorsBuild(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the assembly is read from `go build -race -gcflags=-S`: %v", err)
	}
	const pkg = "github.com/weir-stream/weir/codec"
	var out bytes.Buffer
	cmd := exec.Command(goCmd, "build", "-race", "-o", os.DevNull, "-gcflags="+pkg+"=-S", ".")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build -race: %v\n%s", err, out.String())
	}
	var body []string
	in := false
	for line := range strings.Lines(out.String()) {
		if strings.Contains(line, " STEXT") {
			in = strings.HasPrefix(line, pkg+".noescape STEXT")
			if in {
				body = append(body, line)
			}
			continue
		}
		if in {
			body = append(body, line)
		}
	}
	if len(body) == 0 {
		t.Fatalf("no assembly of noescape in the race build's output:\n%.2000s", out.String())
	}
	for _, l := range body {
		if strings.Contains(l, "CALL") {
			t.Errorf("noescape calls something in the race detector's build: %s", strings.TrimSpace(l))
		}
	}
}
