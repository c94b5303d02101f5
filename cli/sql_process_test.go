package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
)

// sqlScript writes Nexmark's DDL and q5 (hot items: a window aggregation
// and a window join) as published, with the sink a JSON table in
// ${OUT} and the generator throttled by ${RATE}, and returns its path.
func sqlScript(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "internal", "sql", "parse", "testdata", "nexmark")
	var b strings.Builder
	for _, f := range []string{"ddl_gen.sql", "ddl_views.sql", "q5.sql"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteString(";\n")
	}
	text := strings.Replace(b.String(), "'connector' = 'blackhole'", "'connector' = 'filesystem', 'path' = '${OUT}', 'format' = 'json'", 1)
	text = strings.Replace(text, "'connector' = 'nexmark',", "'connector' = 'nexmark', 'rate' = '${RATE}',", 1)
	path := filepath.Join(t.TempDir(), "q5.sql")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func sqlVars(out, rate string) []string {
	var args []string
	for _, v := range []string{"NEXMARK_TABLE=datagen", "TPS=10000", "EVENTS_NUM=400000", "PERSON_PROPORTION=1",
		"AUCTION_PROPORTION=3", "BID_PROPORTION=46", "OUT=" + out, "RATE=" + rate} {
		args = append(args, "--var", v)
	}
	return args
}

// A SQL job submitted to a cluster (weir submit sql -f FILE: the script
// travels with the job) survives a worker killed mid-run: the job
// restarts from its latest checkpoint on a replacement and writes what
// the same script writes in one process without failures.
func TestClusterRunsASQLScriptThroughAWorkerKill(t *testing.T) {
	clusterTest(t)
	script := sqlScript(t)
	refDir := filepath.Join(t.TempDir(), "ref")
	args := append([]string{"sql", "-f", script, "-p", "3", "--progress", "off"}, sqlVars(refDir, "0")...)
	if res, err := exec.Command(weirBinary(t), args...).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, res)
	}
	ref := lines(t, refDir)
	if len(ref) == 0 {
		t.Fatal("the reference run wrote nothing")
	}
	c := newCluster(t, 3)
	out := filepath.Join(c.dir, "sql-out")
	submit := append([]string{"submit", "--coordinator", c.addr, "sql", "-f", script, "-p", "3", "--guarantee", "exactly-once",
		"--checkpoint-interval", "300ms", "--log-checkpoints", "--wait"}, sqlVars(out, "80000")...)
	client := start(t, "submit", submit...)
	c.coord.waitFor(`checkpoint 2 completed`)
	c.workers["w2"].kill()
	c.coord.waitFor(`worker w2 lost`)
	c.startWorker("w4")
	c.coord.waitFor(`restarting in .* from checkpoint`)
	if err := client.wait(); err != nil {
		t.Fatalf("the job did not finish: %v\nclient:\n%s\ncoordinator:\n%s", err, client.output(), c.coord.output())
	}
	if !strings.Contains(client.output(), "recovery 1: restored checkpoint") {
		t.Fatalf("no recovery from a checkpoint was reported:\n%s", client.output())
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, ref, lines(t, out)); err != nil {
		t.Fatalf("the cluster's output is not the failure-free output: %v", err)
	}
}
