package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/connectors/objstore"
	"github.com/weir-stream/weir/connectors/stdout"
)

// runMarker is the file in an --output directory that names the run whose
// output the directory holds. The file sink's readers (part-*.jsonl)
// never see it.
const runMarker = ".weir-run"

// startOutput prepares the --output directory dir as a run starts: a
// fresh run clears what an earlier run left and marks the directory as
// its own; a restored run continues the output of its checkpoint's run,
// so the directory must carry that run's mark.
//
// An s3:// location is the object-store sink's: its restore cleans up
// by itself, and nothing here touches it.
func startOutput(dir string, s weir.RunStart) error {
	if dir == "-" || dir == "" || strings.HasPrefix(dir, "s3://") {
		return nil
	}
	if s.Restored == 0 {
		return prepareOutput(dir, s.Run)
	}
	data, err := os.ReadFile(filepath.Join(dir, runMarker))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: --output %s holds no output of run %s, which took checkpoint %d: a restore continues the output of the run it restores, so this directory would get only what comes after the checkpoint. Restore with the --output of that run, or start the job over without --restore",
			weir.ErrOtherRun, dir, s.Run, s.Restored)
	case err != nil:
		return fmt.Errorf("--output: %w", err)
	}
	if got := strings.TrimSpace(string(data)); got != s.Run {
		return fmt.Errorf("%w: --output %s holds the output of run %s, but checkpoint %d belongs to run %s: restoring it would mix the two runs' output. Restore with the --output of run %s, or start the job over without --restore",
			weir.ErrOtherRun, dir, got, s.Restored, s.Run, s.Run)
	}
	return nil
}

// prepareOutput removes the part files and run mark an earlier run left
// in an output directory, so that the directory holds exactly this run's
// results, and marks it with run (if run is not empty: a run without
// checkpoints cannot be restored).
func prepareOutput(dir, run string) error {
	for _, pattern := range []string{"part-*.jsonl", ".part-*", runMarker} {
		old, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return err
		}
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				return fmt.Errorf("--output: removing an earlier run's %s: %w", f, err)
			}
		}
	}
	if run == "" {
		return nil
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return connector.ConfigError(fmt.Errorf("--output %s exists and is not a directory", dir))
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("--output: %w", err)
	}
	tmp := filepath.Join(dir, runMarker+".tmp")
	if err := os.WriteFile(tmp, []byte(run+"\n"), 0o666); err != nil {
		return fmt.Errorf("--output: marking the directory as this run's: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, runMarker)); err != nil {
		return fmt.Errorf("--output: marking the directory as this run's: %w", err)
	}
	return nil
}

// OutputSink returns the sink for a job's --output (JobConfig.Output):
// JSON lines on standard output (cfg.Stdout, or os.Stdout when it is nil)
// for "-" or "", and otherwise a directory of JSON-lines part files
// (file.JSONSink: part-<subtask>-<checkpoint>.jsonl with checkpoints, so
// exactly-once; docs/connectors.md), or for an s3://bucket/prefix location
// JSON-lines part files in an object store (objstore.NewSink, exactly-once
// by multipart uploads completed with checkpoints). A job's builder passes cfg as it got
// it:
//
//	weir.To(results, "output", cli.OutputSink[Result](cfg))
func OutputSink[T any](cfg JobConfig) connector.Sink[T] {
	if cfg.Output == "-" || cfg.Output == "" {
		if cfg.Stdout != nil {
			return stdout.To[T](cfg.Stdout)
		}
		return stdout.JSON[T]()
	}
	if strings.HasPrefix(cfg.Output, "s3://") {
		return objstore.NewSink(objstore.SinkConfig[T]{Location: cfg.Output, Format: objstore.JSONLines[T]()})
	}
	return file.JSONSink[T](cfg.Output)
}
