package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/file"
)

// runReference runs the job without failures or checkpoints into a
// directory beside output, for --verify.
func runReference(ctx context.Context, build Builder, cfg JobConfig, base []weir.Option, name, output string, stderr io.Writer) (string, time.Duration, error) {
	dir := filepath.Clean(output) + ".reference"
	if err := os.RemoveAll(dir); err != nil {
		return "", 0, err
	}
	cfg.Output = dir
	p := weir.NewPipeline(append(base, weir.WithName(name+"-reference"))...)
	if err := build(p, cfg); err != nil {
		return "", 0, usageError{err}
	}
	start := time.Now()
	if err := p.Run(ctx); err != nil {
		return "", 0, fmt.Errorf("reference run without failures: %w", err)
	}
	took := time.Since(start)
	fmt.Fprintf(stderr, "weir: reference run without failures finished in %v (output in %s)\n", took.Round(time.Millisecond), dir)
	return dir, took, nil
}

// ErrViolation is wrapped by the error of a --verify run whose output
// breaks its guarantee.
var ErrViolation = errors.New("guarantee violated")

// verify compares the run's output with the reference's.
func verify(j Job, g weir.Guarantee, refDir, outDir string, stderr io.Writer) error {
	ref, err := file.ReadLines(refDir)
	if err != nil {
		return fmt.Errorf("--verify: reading the reference output: %w", err)
	}
	got, err := file.ReadLines(outDir)
	if err != nil {
		return fmt.Errorf("--verify: reading the output: %w", err)
	}
	check := j.Verify
	if check == nil {
		check = VerifyLines
	}
	if err := check(g, ref, got); err != nil {
		return fmt.Errorf("--verify: %s: %w: %v", g, ErrViolation, err)
	}
	fmt.Fprintf(stderr, "weir: verified %s: %d output rows, failure-free run %d rows\n", g, len(got), len(ref))
	return nil
}
