package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeHistory writes n bids as JSON lines to three files of a new
// directory, as kafka-q1 --history reads them.
func writeHistory(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	var files [3]strings.Builder
	for i := range n {
		fmt.Fprintf(&files[i%3], `{"auction":%d,"bidder":%d,"price":%d,"channel":"history","url":"h","dateTime":%d,"extra":""}`+"\n",
			1000+i%97, i, 100+i%1000, int64(i))
	}
	for i := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.jsonl", i)), []byte(files[i].String()), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// kafka-q1 --history reads JSON-lines files and then a topic through the
// hybrid source: killed with SIGKILL after checkpoints, in the history
// and in the topic, and restored, it leaves a read_committed consumer
// exactly the output of a run without kills.
func TestKafkaQ1WithHistoryIsExactlyOnceAcrossSIGKILLAndRestore(t *testing.T) {
	b := kafkaBrokers(t)
	topics := kafkaTopics(t, "bids", "ref", "out")
	mustRun(t, "run", "nexmark-to-kafka", "--events", "20000", "--brokers", b, "--sink-topic", topics[0],
		"--progress", "off", "--guarantee", "exactly-once", "--checkpoint-interval", "200ms")
	settled(t, topics[0]) // the bounded reads below all end at its end
	const historyBids = 8000
	history := writeHistory(t, historyBids)
	q1 := []string{"run", "kafka-q1", "--brokers", b, "--source-topic", topics[0], "--bounded", "--history", history,
		"-p", "2", "--progress", "off", "--guarantee", "exactly-once"}
	mustRun(t, append(q1, "--sink-topic", topics[1])...)
	want := readCommitted(t, topics[1])
	fromHistory := 0
	for _, w := range want {
		if strings.Contains(w, `"channel":"history"`) {
			fromHistory++
		}
	}
	if fromHistory != historyBids || len(want) < historyBids+15000 {
		t.Fatalf("the reference run wrote %d bids, %d from the history; want all %d of the history and about 18,400 from the topic",
			len(want), fromHistory, historyBids)
	}

	// At 8,000 bids a second the history lasts about 1 s and the topic
	// over 2 s; five kills, each after 4 checkpoints 100ms apart, spread
	// over about 2 s of reading, across the switch to the topic.
	state := t.TempDir()
	ft := append(q1, "--sink-topic", topics[2], "--checkpoint-interval", "100ms", "--state-dir", state,
		"--rate", "8000", "--log-checkpoints")
	killAfterCheckpoints(t, 4, ft...)
	for range 4 {
		killAfterCheckpoints(t, 4, append(ft, "--restore", "latest")...)
	}
	res := mustRun(t, append(ft, "--restore", "latest")...)
	if !strings.Contains(res, "restoring checkpoint") {
		t.Fatalf("no restore reported:\n%s", res)
	}
	if d := diffCount(readCommitted(t, topics[2]), want); d != "" {
		t.Fatalf("after 5 SIGKILLs and restores a read_committed consumer does not see the failure-free output: %s", d)
	}
}
