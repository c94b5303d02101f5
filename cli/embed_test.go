package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/connectors/file"
)

// greeting is the record of the greet job.
type greeting struct {
	Name  string `json:"name"`
	Times int    `json:"times"`
}

// The greet job, as a program embedding weir declares one: its flags on
// a cli.FlagSet (no pflag import) and its results to cli.OutputSink.
func init() {
	cli.RegisterJob(cli.Job{
		Name:  "greet",
		Short: "Greet a few names",
		Flags: func(fs *cli.FlagSet) cli.Builder {
			times := fs.Int("times", 1, "how often to greet each name")
			return func(p *weirapi.Pipeline, cfg cli.JobConfig) error {
				names := weirapi.FromSource(p, "names", collection.Of("ann", "bob"), weirapi.SourceParallelism(1))
				greetings := weirapi.Map(names, func(n string) greeting { return greeting{n, *times} })
				weirapi.To(greetings, "output", cli.OutputSink[greeting](cfg), weirapi.Parallelism(1))
				return nil
			}
		},
	})
}

func runWith(opts []cli.Option, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = cli.Run(context.Background(), args, &out, &errb, opts...)
	return code, out.String(), errb.String()
}

// A program built on the command line shows its own name in its usage
// and its errors.
func TestWithNameNamesTheProgram(t *testing.T) {
	opts := []cli.Option{cli.WithName("shop")}
	code, stdout, _ := runWith(opts, "--help")
	if code != 0 || !strings.Contains(stdout, "Usage:\n  shop [flags]\n  shop [command]") {
		t.Errorf("shop --help: exit %d, stdout %q; want the usage of shop", code, stdout)
	}
	code, stdout, _ = runWith(opts, "run", "greet", "--help")
	if code != 0 || !strings.Contains(stdout, "shop run greet [flags]") {
		t.Errorf("shop run greet --help: exit %d, stdout %q", code, stdout)
	}
	code, _, stderr := runWith(opts, "frobnicate")
	if code != cli.ExitUsage || !strings.HasPrefix(stderr, `shop: unknown command "frobnicate"`) {
		t.Errorf("shop frobnicate: exit %d, stderr %q", code, stderr)
	}
}

// WithoutBuiltins leaves out weir's demo jobs and benchmark commands, and
// keeps the program's own jobs, sql and the commands that manage jobs.
func TestWithoutBuiltinsLeavesOutTheDemoJobsAndBenchmarks(t *testing.T) {
	demo := []string{"keycount", "wordcount", "largestate", "nexmark"}
	_, all, _ := runWith(nil, "run", "--help")
	for _, j := range append(demo, "greet", "sql") {
		if !strings.Contains(all, "  "+j+" ") {
			t.Errorf("weir run --help does not list %s:\n%s", j, all)
		}
	}
	opts := []cli.Option{cli.WithName("shop"), cli.WithoutBuiltins()}
	_, runHelp, _ := runWith(opts, "run", "--help")
	_, rootHelp, _ := runWith(opts, "--help")
	for _, j := range demo {
		if strings.Contains(runHelp, "  "+j+" ") {
			t.Errorf("shop run --help lists the demo job %s:\n%s", j, runHelp)
		}
	}
	for _, j := range []string{"greet", "sql"} {
		if !strings.Contains(runHelp, "  "+j+" ") {
			t.Errorf("shop run --help does not list %s:\n%s", j, runHelp)
		}
	}
	for _, c := range []string{"nexmark", "bench"} {
		if strings.Contains(rootHelp, "  "+c+" ") {
			t.Errorf("shop --help lists the command %s:\n%s", c, rootHelp)
		}
	}
	for _, c := range []string{"run", "sql", "coordinator", "worker", "submit", "savepoint"} {
		if !strings.Contains(rootHelp, "  "+c+" ") {
			t.Errorf("shop --help does not list the command %s:\n%s", c, rootHelp)
		}
	}
	code, _, stderr := runWith(opts, "run", "keycount")
	if code != cli.ExitUsage || !strings.Contains(stderr, `unknown job "keycount"`) || strings.Contains(stderr, "wordcount") {
		t.Errorf("shop run keycount: exit %d, stderr %q; want an unknown job naming only the program's jobs", code, stderr)
	}
	if code, _, _ := runWith(opts, "bench", "nexmark"); code != cli.ExitUsage {
		t.Errorf("shop bench nexmark: exit %d, want %d", code, cli.ExitUsage)
	}
}

// weir run --help lists the flags every job takes.
func TestRunHelpListsTheSharedFlags(t *testing.T) {
	for _, args := range [][]string{{"run", "--help"}, {"help", "run"}} {
		code, stdout, _ := weir(t, args...)
		for _, f := range []string{"--parallelism", "--output", "--checkpoint-interval", "--guarantee", "--state-dir", "--http"} {
			if code != 0 || !strings.Contains(stdout, f) {
				t.Errorf("weir %s: exit %d, help lacks %s:\n%s", strings.Join(args, " "), code, f, stdout)
			}
		}
	}
	// A shared flag before the job still reaches the job.
	code, stdout, stderr := weir(t, "run", "-p", "1", "greet", "--times", "2")
	if want := "{\"name\":\"ann\",\"times\":2}\n{\"name\":\"bob\",\"times\":2}\n"; code != 0 || stdout != want {
		t.Errorf("weir run -p 1 greet: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
}

// OutputSink writes to JobConfig.Stdout for "-" and to part files in a
// directory otherwise, the same rows either way.
func TestOutputSinkWritesStdoutOrADirectory(t *testing.T) {
	run := func(cfg cli.JobConfig) {
		t.Helper()
		p := weirapi.NewPipeline(weirapi.WithParallelism(2))
		weirapi.To(weirapi.FromSource(p, "in", collection.Of(1, 2, 3)), "out", cli.OutputSink[int](cfg))
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	run(cli.JobConfig{Output: "-", Stdout: &buf})
	got := strings.Fields(buf.String())
	slices.Sort(got)
	if want := []string{"1", "2", "3"}; !slices.Equal(got, want) {
		t.Errorf(`Output "-": got %q, want %q`, got, want)
	}
	dir := t.TempDir()
	run(cli.JobConfig{Output: dir, Stdout: io.Discard})
	lines, err := file.ReadLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	if want := []string{"1", "2", "3"}; !slices.Equal(lines, want) {
		t.Errorf("Output %s: got %q, want %q", dir, lines, want)
	}
}

// Dashboard serves the JSON API, the metrics and the page of weir run
// --http for a pipeline the program runs itself.
func TestDashboardServesTheJSONAPIAndMetrics(t *testing.T) {
	p := weirapi.NewPipeline(weirapi.WithName("orders"))
	weirapi.To(weirapi.FromSource(p, "in", collection.Of(1, 2, 3)), "out", collection.NewSink[int]())
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(cli.Dashboard("", p))
	defer srv.Close()
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s %s", path, resp.Status, body)
		}
		return string(body)
	}
	var jobs []struct{ Name string }
	if err := json.Unmarshal([]byte(get("/api/v1/jobs")), &jobs); err != nil || len(jobs) != 1 || jobs[0].Name != "orders" {
		t.Errorf("GET /api/v1/jobs: %v, err %v; want the job orders", jobs, err)
	}
	if m := get("/metrics"); !strings.Contains(m, `job="orders"`) {
		t.Errorf("GET /metrics lacks the job orders:\n%.500s", m)
	}
	if page := get("/"); !strings.Contains(page, "<html") {
		t.Errorf("GET / is not the dashboard page: %.200s", page)
	}
}

// A program's own job, run through the command line with its name and
// without weir's demo jobs (as Main would with os.Args).
func ExampleRun() {
	code := cli.Run(context.Background(), []string{"run", "greet", "--times", "3", "-p", "1"},
		os.Stdout, io.Discard, cli.WithName("greeter"), cli.WithoutBuiltins())
	fmt.Println("exit status", code)
	// Output:
	// {"name":"ann","times":3}
	// {"name":"bob","times":3}
	// exit status 0
}
