package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connectors/file"
)

// The totals job, run through the command line as ./shop run totals
// would, gives each customer's running totals, exactly-once under
// injected failures (--verify compares with a failure-free run).
func TestTotals(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "orders.jsonl")
	orders := `{"customer": "ann", "cents": 100}
{"customer": "bob", "cents": 250}
{"customer": "ann", "cents": 50}
{"customer": "ann", "cents": 1}
`
	if err := os.WriteFile(in, []byte(orders), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := cli.Run(context.Background(), []string{"run", "totals", "--input", in, "--output", out, "-p", "2",
		"--guarantee", "exactly-once", "--checkpoint-interval", "10ms", "--inject-failures", "1", "--verify"},
		&stdout, &stderr, cli.WithName("shop"), cli.WithoutBuiltins())
	if code != 0 {
		t.Fatalf("shop run totals: exit %d\n%s", code, stderr.String())
	}
	got, err := file.ReadLines(out)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{
		`{"customer":"ann","cents":100}`, `{"customer":"ann","cents":150}`, `{"customer":"ann","cents":151}`,
		`{"customer":"bob","cents":250}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if !strings.Contains(stderr.String(), "verified exactly-once") {
		t.Errorf("stderr lacks the verification:\n%s", stderr.String())
	}
}

// docs/embedding.md shows this program as it is.
func TestTheDocsShowThisProgram(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/embedding.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, src) {
		t.Error("docs/embedding.md does not contain examples/embedding/main.go as it is; copy the file into the page")
	}
}
