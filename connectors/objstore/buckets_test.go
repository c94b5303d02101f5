package objstore_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/objstore"
)

// writeAndCommit writes batches through one transactional writer of
// sink, one checkpoint per batch, committing each, and closes it.
func writeAndCommit[T any](t *testing.T, sink connector.Sink[T], batches ...[]T) {
	t.Helper()
	ctx := context.Background()
	w, err := sink.Open(ctx, connector.SubtaskInfo{Subtask: 0, Parallelism: 1})
	must(t, err)
	c := w.(connector.Committer)
	must(t, c.Recover(ctx, 0, nil))
	for i, b := range batches {
		must(t, w.Write(ctx, b))
		txn, err := c.PreCommit(ctx, int64(i+1))
		must(t, err)
		must(t, c.Commit(ctx, txn))
	}
	must(t, w.Close())
}

// Records go to the part files of their buckets, named as the package
// documents, and each checkpoint finishes the open files.
func TestSinkPartitionsByEventTimeAndNamesPartFiles(t *testing.T) {
	loc := s3Server(t).location()
	hour := time.Date(2024, 5, 1, 13, 0, 0, 0, time.UTC)
	sink := objstore.NewSink(objstore.SinkConfig[event]{Location: loc, Format: objstore.JSONLines[event](),
		Bucket: objstore.EventTimeBuckets(func(e event) time.Time { return time.UnixMilli(e.Time) })})
	at := func(id int64, d time.Duration) event { return event{ID: id, Time: hour.Add(d).UnixMilli()} }
	writeAndCommit(t, sink,
		[]event{at(1, 0), at(2, time.Hour), at(3, time.Minute)},
		[]event{at(4, 25*time.Hour)})
	keys, err := objstore.List(context.Background(), loc)
	must(t, err)
	prefix := strings.TrimPrefix(loc[:strings.Index(loc, "?")], "s3://weir-test/")
	var got []string
	for _, k := range keys {
		got = append(got, strings.TrimPrefix(k, prefix+"/"))
	}
	want := []*regexp.Regexp{
		regexp.MustCompile(`^dt=2024-05-01/hour=13/part-0-1-[0-9a-f]{16}-1\.jsonl$`),
		regexp.MustCompile(`^dt=2024-05-01/hour=14/part-0-1-[0-9a-f]{16}-2\.jsonl$`),
		regexp.MustCompile(`^dt=2024-05-02/hour=14/part-0-2-[0-9a-f]{16}-3\.jsonl$`),
	}
	if len(got) != len(want) {
		t.Fatalf("part files %q, want %d", got, len(want))
	}
	for i := range want {
		if !want[i].MatchString(got[i]) {
			t.Errorf("part file %d is %q, want %v", i, got[i], want[i])
		}
	}
}

// A bucket name that is not a clean relative path fails the writer,
// naming it.
func TestSinkRefusesABadBucketName(t *testing.T) {
	loc := s3Server(t).location()
	for _, b := range []string{"/abs", "a//b", "../up", "a/"} {
		sink := objstore.NewSink(objstore.SinkConfig[int]{Location: loc, Format: objstore.JSONLines[int](), Bucket: func(int) string { return b }})
		w, err := sink.Open(context.Background(), connector.SubtaskInfo{Subtask: 0, Parallelism: 1})
		must(t, err)
		err = w.Write(context.Background(), []int{1})
		if err == nil || !strings.Contains(err.Error(), `"`+b+`"`) {
			t.Errorf("bucket %q: %v", b, err)
		}
		w.Close()
	}
}

// The rolling policy finishes files by size, age and inactivity, before
// the checkpoint that finishes them anyway.
func TestSinkRollsFilesBySizeAgeAndInactivity(t *testing.T) {
	srv := s3Server(t)
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	cases := []struct {
		name    string
		policy  objstore.RollingPolicy
		advance time.Duration // per batch
		want    int           // part files for 6 batches of one record
	}{
		{"none", objstore.RollingPolicy{}, time.Second, 1},
		{"size", objstore.RollingPolicy{MaxFileSize: 4}, time.Second, 3}, // "1\n2\n" fills 4 bytes
		{"age", objstore.RollingPolicy{RolloverInterval: 3 * time.Second}, time.Second, 2},
		{"inactivity", objstore.RollingPolicy{InactivityInterval: 2 * time.Second}, 2 * time.Second, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loc := srv.location()
			sink := objstore.NewSink(objstore.SinkConfig[int]{Location: loc, Format: objstore.JSONLines[int](), Rolling: c.policy, Now: clock})
			ctx := context.Background()
			w, err := sink.Open(ctx, connector.SubtaskInfo{Subtask: 0, Parallelism: 1})
			must(t, err)
			c2 := w.(connector.Committer)
			must(t, c2.Recover(ctx, 0, nil))
			for i := 1; i <= 6; i++ {
				must(t, w.Write(ctx, []int{i}))
				now = now.Add(c.advance)
			}
			must(t, w.Write(ctx, nil)) // the clock moved on: inactivity is checked at every Write
			txn, err := c2.PreCommit(ctx, 1)
			must(t, err)
			must(t, c2.Commit(ctx, txn))
			must(t, w.Close())
			keys, err := objstore.List(ctx, loc)
			must(t, err)
			if len(keys) != c.want {
				t.Errorf("%d part files, want %d: %q", len(keys), c.want, keys)
			}
			if got := readLines(t, loc); !slices.Equal(got, []string{"1", "2", "3", "4", "5", "6"}) {
				t.Errorf("lines %q", got)
			}
		})
	}
}
