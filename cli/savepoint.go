package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli/internal/web"
)

// Savepoints of a job run by weir run: SIGUSR1 takes one into
// --savepoint-dir, and weir savepoint and weir stop ask the job's --http
// API (POST /api/v1/savepoints) for one. docs/savepoints.md.

// watchSavepointSignal takes a savepoint of p into dir each time the
// process receives SIGUSR1, until the returned stop is called; stop
// cancels a savepoint in progress and waits for the goroutine. The
// engine logs each savepoint's path; a failure or a missing dir is
// logged here.
func watchSavepointSignal(ctx context.Context, p *weir.Pipeline, dir string, logf func(string)) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
			}
			if dir == "" {
				logf("SIGUSR1: no savepoint taken: no --savepoint-dir was given")
				continue
			}
			logf("SIGUSR1: taking a savepoint into " + dir)
			if _, err := p.Savepoint(ctx, dir); err != nil && ctx.Err() == nil {
				logf(fmt.Sprintf("SIGUSR1: no savepoint: %v", err))
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		cancel()
		<-done
	}
}

func savepointClientFlags(cmd *cobra.Command, addr, dir *string) {
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(addr, "http", "127.0.0.1:8081", "address the job serves its API on (weir run --http)")
	fs.StringVar(dir, "dir", "", "where the savepoint's directory goes: a directory (every process of a cluster reaches), file:///path or s3://bucket/prefix?endpoint=URL (default: the job's or the coordinator's --savepoint-dir)")
}

// printSavepoint asks the job at addr for the savepoint req describes,
// prints its path on stdout and what it holds on stderr.
func printSavepoint(ctx context.Context, addr string, req web.SavepointRequest, stdout, stderr io.Writer) error {
	sp, err := httpSavepoint(ctx, addr, req)
	if err != nil {
		return err
	}
	stopped := ""
	switch {
	case req.Drain:
		stopped = "; the job drained and stops"
	case req.Stop:
		stopped = "; the job stops"
	}
	fmt.Fprintf(stderr, "weir: savepoint of checkpoint %d written to %s (%s, %v)%s\n", sp.Checkpoint, sp.Path, bytes(sp.Bytes), sp.Duration.Round(time.Millisecond), stopped)
	fmt.Fprintln(stdout, sp.Path)
	return nil
}

// httpSavepoint posts req to the savepoint API of the job that weir run
// serves at addr (POST /api/v1/savepoints) and returns the savepoint it
// wrote. It waits as long as the savepoint takes, until ctx ends; an
// error carries the server's message.
func httpSavepoint(ctx context.Context, addr string, req web.SavepointRequest) (weir.Savepoint, error) {
	var sp weir.Savepoint
	if err := postAPI(ctx, "savepoint", addr, "/api/v1/savepoints", req, &sp); err != nil {
		return weir.Savepoint{}, err
	}
	if sp.Path == "" {
		return weir.Savepoint{}, errors.New("savepoint: the answer names no path")
	}
	return sp, nil
}

// postAPI posts req as JSON to path of the API that weir run serves at
// addr (host:port or a URL) and decodes the answer into answer. It waits
// as long as the server takes, until ctx ends. Its errors start with
// what; a refusal carries the server's status and message.
func postAPI(ctx context.Context, what, addr, path string, req, answer any) error {
	base := addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	hreq, err := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return fmt.Errorf("%s: %w (is the job running with --http %s?)", what, err, addr)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(data))
		}
		return fmt.Errorf("%s: %s: %s", what, resp.Status, e.Error)
	}
	if err := json.Unmarshal(data, answer); err != nil {
		return fmt.Errorf("%s: the answer is not what was asked for: %w", what, err)
	}
	return nil
}
