package cli_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	nc "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	weirapi "github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/cli/jobs"
	"github.com/weir-stream/weir/connectors/format"
	"github.com/weir-stream/weir/internal/testenv"
)

// streamRows returns the keycount rows published to a stream, as the
// JSON lines the file sink would have written.
func streamRows(t *testing.T, js jetstream.JetStream, name string) []string {
	t.Helper()
	st, info := streamState(t, js, name)
	var out []string
	if info.State.Msgs == 0 {
		return nil
	}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(t.Context(), seq)
		if err != nil {
			t.Fatalf("reading %s sequence %d: %v", name, seq, err)
		}
		var k jobs.KeyCount
		if err := json.Unmarshal(m.Data, &k); err != nil {
			t.Fatalf("%s sequence %d: %v", name, seq, err)
		}
		b, _ := json.Marshal(k)
		out = append(out, string(b))
	}
	return out
}

// streamState returns stream name and what it holds now.
func streamState(t *testing.T, js jetstream.JetStream, name string) (jetstream.Stream, *jetstream.StreamInfo) {
	t.Helper()
	st, err := js.Stream(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st, info
}

// streamCount returns the number of messages stream name holds.
func streamCount(t *testing.T, js jetstream.JetStream, name string) uint64 {
	t.Helper()
	_, info := streamState(t, js, name)
	return info.State.Msgs
}

// JetStream -> weir -> JetStream: keycount-nats reads events from a stream
// and publishes counts to another; it is killed with SIGKILL three times
// and restored with --restore latest each time. A consumer of the output
// stream then sees exactly the rows of a failure-free keycount run.
func TestNATSExactlyOnceThroughSIGKILL(t *testing.T) { testNATSThroughSIGKILL(t, []int{2, 2, 2, 2}) }

// The same, each restore at another parallelism: the source's positions
// move to the subtasks that hold each partition now.
func TestNATSExactlyOnceThroughSIGKILLAndRescales(t *testing.T) {
	testNATSThroughSIGKILL(t, []int{2, 3, 1, 8})
}

// testNATSThroughSIGKILL runs keycount-nats at parallelism ps[0], kills
// it and restores it at ps[1], ps[2] (killed again each time), and runs
// it to the end at ps[3].
func testNATSThroughSIGKILL(t *testing.T, ps []int) {
	if testing.Short() {
		t.Skip("kills a separately built weir binary; -race -short adds nothing to it")
	}
	url := testenv.Require(t, "WEIR_NATS_URL")
	conn, err := nc.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	js, err := jetstream.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	const events, keys = 200000, 50
	cfg := jobs.KeyCountConfig{Events: events, Keys: keys, Window: 100 * time.Millisecond, TPS: 100_000, Seed: 1}
	in, out := fmt.Sprintf("KCIN%d_%d", syscall.Getpid(), ps[1]), fmt.Sprintf("KCOUT%d_%d", syscall.Getpid(), ps[1])
	var parts []string
	for p := range 4 {
		parts = append(parts, fmt.Sprintf("%s.p%d", in, p))
	}
	for _, sc := range []jetstream.StreamConfig{{Name: in, Subjects: parts}, {Name: out, Subjects: []string{out + ".counts"}}} {
		js.DeleteStream(t.Context(), sc.Name)
		if _, err := js.CreateStream(t.Context(), sc); err != nil {
			t.Fatal(err)
		}
		defer js.DeleteStream(t.Context(), sc.Name)
	}
	var acks []jetstream.PubAckFuture
	for i := range int64(events) {
		b, _ := json.Marshal(cfg.Event(i))
		f, err := js.PublishAsync(parts[i%4], b)
		if err != nil {
			t.Fatal(err)
		}
		acks = append(acks, f)
		if len(acks) == 1000 || i == events-1 { // stay below the client's limit of pending acks
			for _, f := range acks {
				select {
				case <-f.Ok():
				case err := <-f.Err():
					t.Fatalf("publishing the input: %v", err)
				}
			}
			acks = acks[:0]
		}
	}

	dir := t.TempDir()
	ref := filepath.Join(dir, "ref")
	if res, err := exec.Command(weirBinary(t), "run", "keycount", "--events", fmt.Sprint(events), "--keys", fmt.Sprint(keys),
		"--window", "100ms", "-p", "2", "--progress", "off", "--output", ref).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, res)
	}
	want := lines(t, ref)
	job := []string{"run", "keycount-nats", "--nats-url", url, "--stream", in, "--subject", out + ".counts", "--bounded",
		"--window", "100ms", "--out-of-orderness", "0s", "-p", "2", "--progress", "off", "--guarantee", "exactly-once", "--checkpoint-interval", "50ms",
		"--state-dir", filepath.Join(dir, "state"), "--rate", "60000", "--log-checkpoints"}
	kills, midway := 0, 0
	var seen []int
	for i := range 3 {
		args := withParallelism(job, ps[i])
		if i > 0 {
			args = append(args, "--restore", "latest")
		}
		// Kill once this run has published rows of its own: after a
		// checkpoint completes, the stream holds more rows than when the
		// run started (a fixed number of checkpoints may all complete
		// before a window fires on a loaded machine).
		before := streamCount(t, js, out)
		published := func(line string) bool {
			return strings.Contains(line, " completed in ") && streamCount(t, js, out) > before
		}
		if killWhen(t, published, args...) {
			kills++
			n := len(streamRows(t, js, out))
			seen = append(seen, n)
			if n > 0 && n < len(want) {
				midway++
			}
		}
	}
	if midway == 0 {
		t.Fatalf("no kill happened with part of the output published (rows after each kill: %v): the test proves nothing", seen)
	}
	res, err := exec.Command(weirBinary(t), append(withParallelism(job, ps[3]), "--restore", "latest")...).CombinedOutput()
	if err != nil {
		t.Fatalf("restored run: %v\n%s", err, res)
	}
	if !strings.Contains(string(res), "restoring checkpoint") {
		t.Fatalf("no restore reported:\n%s", res)
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, want, streamRows(t, js, out)); err != nil {
		t.Fatalf("output stream after %d kills and restores is not exactly-once: %v", kills, err)
	}
	t.Logf("%d kills, rows published after each: %v, %d in the end", kills, seen, len(want))
}

const (
	avroEvent = `{"type":"record","name":"KeyEvent","fields":[{"name":"Key","type":"long"},{"name":"Time","type":"long"}]}`
	avroCount = `{"type":"record","name":"KeyCount","fields":[{"name":"Key","type":"long"},{"name":"WindowStart","type":"long"},` +
		`{"name":"WindowEnd","type":"long"},{"name":"Count","type":"long"}]}`
)

// keycount-nats with Avro in and out (no failures): the counts decode
// with the output schema and equal keycount's; a bad format option fails
// the job at start, naming it.
func TestNATSJobAvroAndBadOptions(t *testing.T) {
	url := testenv.Require(t, "WEIR_NATS_URL")
	code, _, stderr := weir(t, "run", "keycount-nats", "--nats-url", url, "--stream", "S", "--subject", "x",
		"--in-format", "avro", "--in-schema", `{"type":"record","name":"E","fields":[{"name":"key","type":"long"}]}`)
	if code != 2 || !strings.Contains(stderr, "--in-format: avro format for jobs.KeyEvent") {
		t.Fatalf("bad schema: exit %d\n%s", code, stderr)
	}
	conn, err := nc.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	js, err := jetstream.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	in, out := fmt.Sprintf("AVIN%d", syscall.Getpid()), fmt.Sprintf("AVOUT%d", syscall.Getpid())
	for _, sc := range []jetstream.StreamConfig{{Name: in, Subjects: []string{in + ".a", in + ".b"}}, {Name: out, Subjects: []string{out}}} {
		js.DeleteStream(t.Context(), sc.Name)
		if _, err := js.CreateStream(t.Context(), sc); err != nil {
			t.Fatal(err)
		}
		defer js.DeleteStream(t.Context(), sc.Name)
	}
	evf, err := format.Avro[jobs.KeyEvent](avroEvent)
	if err != nil {
		t.Fatal(err)
	}
	cfg := jobs.KeyCountConfig{Events: 5000, Keys: 7, Window: 100 * time.Millisecond, TPS: 10_000, Seed: 1}
	for i := range cfg.Events {
		b, _ := evf.Encode(cfg.Event(i))
		if _, err := js.Publish(t.Context(), []string{in + ".a", in + ".b"}[i%2], b); err != nil {
			t.Fatal(err)
		}
	}
	ref := filepath.Join(t.TempDir(), "ref")
	if code, _, stderr := weir(t, "run", "keycount", "--events", "5000", "--keys", "7", "--window", "100ms", "--tps", "10000",
		"-p", "2", "--output", ref); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := weir(t, "run", "keycount-nats", "--nats-url", url, "--stream", in, "--subject", out, "--bounded",
		"--window", "100ms", "-p", "2", "--in-format", "avro", "--in-schema", avroEvent,
		"--out-format", "avro", "--out-schema", avroCount); code != 0 {
		t.Fatalf("keycount-nats: exit %d\n%s", code, stderr)
	}
	countf, err := format.Avro[jobs.KeyCount](avroCount)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for seq := uint64(1); seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(t.Context(), seq)
		if err != nil {
			t.Fatal(err)
		}
		var k jobs.KeyCount
		if err := countf.Decode(m.Data, &k); err != nil {
			t.Fatalf("output sequence %d: %v", seq, err)
		}
		b, _ := json.Marshal(k)
		got = append(got, string(b))
	}
	if err := cli.VerifyLines(weirapi.ExactlyOnce, lines(t, ref), got); err != nil {
		t.Fatalf("Avro output differs from keycount's: %v", err)
	}
}

// An undecodable event: with --on-malformed fail the job stops naming the
// stream and sequence; with skip and --dead-letter it finishes, reports
// the count, and the message is in the dead-letter stream.
func TestNATSJobMalformedEvents(t *testing.T) {
	url := testenv.Require(t, "WEIR_NATS_URL")
	conn, err := nc.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	js, err := jetstream.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	in, out, dead := fmt.Sprintf("BADIN%d", syscall.Getpid()), fmt.Sprintf("BADOUT%d", syscall.Getpid()), fmt.Sprintf("BADDLQ%d", syscall.Getpid())
	for _, name := range []string{in, out, dead} {
		js.DeleteStream(t.Context(), name)
		if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: name, Subjects: []string{name}}); err != nil {
			t.Fatal(err)
		}
		defer js.DeleteStream(t.Context(), name)
	}
	for i, payload := range []string{`{"key":1,"time":0}`, `{"key":2,"time":10}`, `{"key":oops}`, `{"key":1,"time":20}`} {
		if _, err := js.Publish(t.Context(), in, []byte(payload)); err != nil {
			t.Fatalf("publishing event %d: %v", i, err)
		}
	}
	job := []string{"run", "keycount-nats", "--nats-url", url, "--stream", in, "--subject", out, "--bounded", "-p", "1"}
	code, _, stderr := weir(t, job...)
	if code != 1 || !strings.Contains(stderr, fmt.Sprintf("malformed record at stream %s sequence 3 (subject %s)", in, in)) {
		t.Fatalf("--on-malformed fail: exit %d\n%s", code, stderr)
	}
	code, _, stderr = weir(t, append(job, "--on-malformed", "skip", "--dead-letter", dead)...)
	if code != 0 || !strings.Contains(stderr, "skipped 1 malformed records") {
		t.Fatalf("--on-malformed skip: exit %d\n%s", code, stderr)
	}
	st, err := js.Stream(t.Context(), dead)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetMsg(t.Context(), 1)
	if err != nil {
		t.Fatalf("no dead letter: %v", err)
	}
	if string(m.Data) != `{"key":oops}` || m.Header.Get("Weir-Sequence") != "3" {
		t.Fatalf("dead letter %q with headers %v", m.Data, m.Header)
	}
	if got := streamRows(t, js, out); len(got) != 2 { // key 1 (count 2) and key 2 in one window
		t.Fatalf("counts %v, want two rows", got)
	}
}
