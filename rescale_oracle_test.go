package weir_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/weirtest"
)

// The rescale oracle of the root package's operators: a job runs at
// parallelism 2 with exactly-once checkpoints until a checkpoint holds a
// known prefix of its input (the cut), stops, and restores at parallelism
// 1, 3 or 8, from that checkpoint or from a savepoint. Its committed
// output, stopped run and restored run together, must be the multiset a
// failure-free run commits. The jobs are those of
// rescale_oracle_jobs_test.go; their outputs depend only on the input's
// event times, never on arrival order, so the reference is exact.

const (
	oracleRecords = 3000
	oracleSplits  = 24 // divisible by every parallelism the tests use
)

// oev is the oracle's input: record i has key i mod 7, a value from 1 to
// 11 and event time i ms, plus 30ms after every hundred records (gaps
// that close session windows).
type oev struct{ I, Key, Time, Val int64 }

func oevAt(i int64) oev { return oev{I: i, Key: i % 7, Time: i + 30*(i/100), Val: i%11 + 1} }

func oevTime(e oev) int64 { return e.Time }
func oevKey(e oev) int64  { return e.Key }

// splitSource is a source of the records oevAt(i) for i below limit, in
// oracleSplits splits: split j holds the indices j, j+24, j+48, ...
// Subtask s of n reads the splits j with j mod n == s, in index order
// (so in event-time order); its position is each split's next index,
// "j:next" pairs joined by commas. It moves positions to another
// parallelism (connector.Rescaler) by dealing out the splits again.
//
// When limit is below the whole input, a subtask that read its splits
// up to limit idles; ready closes once every one of par subtasks did, so
// that any checkpoint triggered later holds exactly the records below
// limit. The source records the positions its subtasks opened at.
type splitSource struct {
	limit int64
	par   int
	mu    sync.Mutex
	at    map[int]int64 // per split: the next index it was opened at
	done  map[int]bool  // subtasks that read up to limit
	ready chan struct{}
}

func newSplitSource(limit int64, par int) *splitSource {
	return &splitSource{limit: limit, par: par, at: map[int]int64{}, done: map[int]bool{}, ready: make(chan struct{})}
}

// firstAtOrAfter returns the first index of split j at or after i.
func firstAtOrAfter(j int, i int64) int64 {
	if i <= int64(j) {
		return int64(j)
	}
	return int64(j) + (i-int64(j)+oracleSplits-1)/oracleSplits*oracleSplits
}

// splitsOf returns the splits of subtask s of n at the beginning.
func splitsOf(s, n int) map[int]int64 {
	m := map[int]int64{}
	for j := s; j < oracleSplits; j += n {
		m[j] = int64(j)
	}
	return m
}

func encodeSplits(m map[int]int64) connector.Position {
	var parts []string
	for _, j := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d:%d", j, m[j]))
	}
	return connector.Position(strings.Join(parts, ","))
}

func decodeSplits(pos connector.Position) (map[int]int64, error) {
	m := map[int]int64{}
	for _, part := range strings.Split(string(pos), ",") {
		j, next, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("corrupt position %q", pos)
		}
		split, err1 := strconv.Atoi(j)
		n, err2 := strconv.ParseInt(next, 10, 64)
		if err1 != nil || err2 != nil || split < 0 || split >= oracleSplits || n%oracleSplits != int64(split) {
			return nil, fmt.Errorf("corrupt position %q", pos)
		}
		m[split] = n
	}
	return m, nil
}

// Rescale deals the splits of old out to n subtasks.
func (s *splitSource) Rescale(old []connector.Position, n int) ([]connector.Position, error) {
	all := map[int]int64{}
	for i, pos := range old {
		m := splitsOf(i, len(old))
		if pos != nil {
			var err error
			if m, err = decodeSplits(pos); err != nil {
				return nil, err
			}
		}
		for j, next := range m {
			if _, dup := all[j]; dup {
				return nil, fmt.Errorf("split %d in two positions", j)
			}
			all[j] = next
		}
	}
	if len(all) != oracleSplits {
		return nil, fmt.Errorf("positions hold %d splits, want %d", len(all), oracleSplits)
	}
	out := make([]connector.Position, n)
	for k := range n {
		m := map[int]int64{}
		for j := k; j < oracleSplits; j += n {
			m[j] = all[j]
		}
		out[k] = encodeSplits(m)
	}
	return out, nil
}

func (s *splitSource) Open(_ context.Context, info connector.SubtaskInfo, pos connector.Position) (connector.Reader[oev], error) {
	m := splitsOf(info.Subtask, info.Parallelism)
	if pos != nil {
		got, err := decodeSplits(pos)
		if err != nil {
			return nil, err
		}
		for j := range got {
			if j%info.Parallelism != info.Subtask || len(got) != len(m) {
				return nil, fmt.Errorf("position %q is not one of subtask %d of %d", pos, info.Subtask, info.Parallelism)
			}
		}
		m = got
	}
	s.mu.Lock()
	for j, next := range m {
		s.at[j] = next
	}
	s.mu.Unlock()
	return &splitReader{s: s, sub: info.Subtask, next: m}, nil
}

// opened returns the next index of every split when it was opened.
func (s *splitSource) opened() map[int]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.at)
}

type splitReader struct {
	s    *splitSource
	sub  int
	next map[int]int64
}

func (r *splitReader) Read(ctx context.Context, buf []oev) (int, error) {
	n := 0
	for n < len(buf) {
		j, low := -1, r.s.limit
		for split, next := range r.next {
			if next < low {
				j, low = split, next
			}
		}
		if j < 0 {
			break
		}
		buf[n] = oevAt(low)
		r.next[j] += oracleSplits
		n++
	}
	if n > 0 {
		return n, nil
	}
	if r.s.limit >= oracleRecords {
		return 0, errEOF
	}
	r.s.mu.Lock()
	r.s.done[r.sub] = true
	if len(r.s.done) == r.s.par {
		select {
		case <-r.s.ready:
		default:
			close(r.s.ready)
		}
	}
	r.s.mu.Unlock()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(5 * time.Millisecond): // nothing more until stopped
		return 0, nil
	}
}

func (r *splitReader) Position() connector.Position { return encodeSplits(r.next) }
func (r *splitReader) Close() error                 { return nil }

// oracleJob builds a job's operators on its input.
type oracleJob func(in weir.Stream[oev]) weir.Stream[string]

// oraclePipeline returns the pipeline of job at parallelism par reading
// src, checkpointing every 10ms into dir (a fresh directory if empty),
// restoring what restore names unless it is empty. Sources emit
// watermarks every millisecond, so timers fire and windows close while
// records still arrive.
func oraclePipeline(par int, dir, restore string, src *splitSource, job oracleJob, out *weirtest.Sink[string], extra ...weir.Option) *weir.Pipeline {
	opts := []weir.Option{weir.WithName("rescale-oracle"), weir.WithParallelism(par), weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithWatermarkInterval(time.Millisecond),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: 10 * time.Millisecond, StateDir: dir})}
	if restore != "" {
		opts = append(opts, weir.WithRestore(restore))
	}
	opts = append(opts, extra...)
	p := weir.NewPipeline(opts...)
	in := weir.FromSource(p, "events", src, weir.WithTimestamps(oevTime, 5*time.Millisecond))
	weir.To(job(in), "out", out)
	return p
}

// oracleReference returns the output of a failure-free run of job.
func oracleReference(t *testing.T, job oracleJob) []string {
	t.Helper()
	out := weirtest.NewSink[string]()
	run(t, oraclePipeline(2, t.TempDir(), "", newSplitSource(oracleRecords, 2), job, out))
	got := out.Values()
	if len(got) == 0 {
		t.Fatal("the reference run output nothing")
	}
	slices.Sort(got)
	return got
}

// restoreFrom says what a stopped run leaves for the restored one.
type restoreFrom int

const (
	// fromCheckpoint: the run is cancelled after a checkpoint at the cut
	// completed, and the restore takes the latest checkpoint.
	fromCheckpoint restoreFrom = iota
	// fromSavepoint: the run stops with a savepoint at the cut, which the
	// restore takes.
	fromSavepoint
)

func (r restoreFrom) String() string { return [...]string{"checkpoint", "savepoint"}[r] }

// stoppedAndRestored runs job at parallelism 2 until a checkpoint holds
// the records below cut, stops it as from says and restores it at
// parallelism par; it returns the output both runs committed.
func stoppedAndRestored(t *testing.T, job oracleJob, cut int64, par int, from restoreFrom) []string {
	t.Helper()
	dir := t.TempDir()
	out := weirtest.NewSink[string]()
	first := newSplitSource(cut, 2)
	p := oraclePipeline(2, filepath.Join(dir, "state"), "", first, job, out, weirtest.StateBackendFromEnv()...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case <-first.ready:
	case err := <-done:
		t.Fatalf("the run ended before it reached the cut: %v", err)
	}
	stateDir, restore := filepath.Join(dir, "state"), "latest"
	switch from {
	case fromCheckpoint:
		// The savepoint's checkpoint is one at the cut in the state
		// directory; the savepoint itself is not restored.
		if _, err := p.Savepoint(ctx, filepath.Join(dir, "unused")); err != nil {
			cancel()
			<-done
			t.Fatalf("savepoint: %v", err)
		}
		cancel()
		<-done
	case fromSavepoint:
		sp, err := p.StopWithSavepoint(ctx, filepath.Join(dir, "savepoints"))
		if err != nil {
			cancel()
			<-done
			t.Fatalf("stop with savepoint: %v", err)
		}
		if err := <-done; err != nil {
			t.Fatalf("stopped with a savepoint: Run = %v, want nil", err)
		}
		stateDir, restore = filepath.Join(dir, "restored"), sp.Path
	}

	src := newSplitSource(oracleRecords, par)
	q := oraclePipeline(par, stateDir, restore, src, job, out, weirtest.StateBackendFromEnv()...)
	run(t, q)
	if q.Report().Restored == 0 {
		t.Fatalf("the run at parallelism %d restored nothing", par)
	}
	at := src.opened()
	for j := range oracleSplits {
		if want := firstAtOrAfter(j, cut); at[j] != want {
			t.Fatalf("the restored run opened split %d at %d, want %d (the cut at %d): positions %v", j, at[j], want, cut, at)
		}
	}
	got := out.Values()
	slices.Sort(got)
	return got
}

// oracleCase is a job with the parallelisms it restores at, each from a
// checkpoint or a savepoint.
type oracleCase struct {
	name string
	job  oracleJob
	cut  int64
	to   []int
	from []restoreFrom
}

func TestRescaleOracleOfTheRootOperators(t *testing.T) {
	cases := []oracleCase{
		{"deduplicate", dedupJob, 1234, []int{1, 3, 8}, []restoreFrom{fromCheckpoint, fromSavepoint, fromCheckpoint}},
		{"window join", windowJoinJob, 1111, []int{1, 3, 8}, []restoreFrom{fromSavepoint, fromCheckpoint, fromSavepoint}},
		{"interval join", intervalJoinJob, 1457, []int{1, 3, 8}, []restoreFrom{fromCheckpoint, fromSavepoint, fromCheckpoint}},
		{"co-process with timers", coProcessJob, 1290, []int{1, 3, 8}, []restoreFrom{fromSavepoint, fromCheckpoint, fromSavepoint}},
		{"session windows", sessionJob, 1234, []int{1, 3, 8}, []restoreFrom{fromCheckpoint, fromSavepoint, fromCheckpoint}},
		{"process function with timers", timersJob, 1375, []int{1, 3, 8}, []restoreFrom{fromSavepoint, fromCheckpoint, fromSavepoint}},
		{"assigned timestamps and side outputs", assignedJob, 1321, []int{1, 2, 8}, []restoreFrom{fromCheckpoint, fromSavepoint, fromSavepoint}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := oracleReference(t, c.job)
			for i, par := range c.to {
				t.Run(fmt.Sprintf("p%d from %s", par, c.from[i]), func(t *testing.T) {
					got := stoppedAndRestored(t, c.job, c.cut, par, c.from[i])
					if !slices.Equal(got, want) {
						t.Fatalf("restored at parallelism %d from a %s: not exactly-once\n%s", par, c.from[i], multisetDiff(got, want))
					}
				})
			}
		})
	}
}

// multisetDiff describes how sorted got differs from sorted want.
func multisetDiff(got, want []string) string {
	count := map[string]int{}
	for _, s := range got {
		count[s]++
	}
	for _, s := range want {
		count[s]--
	}
	var extra, missing []string
	for _, s := range slices.Sorted(maps.Keys(count)) {
		for ; count[s] > 0; count[s]-- {
			extra = append(extra, s)
		}
		for ; count[s] < 0; count[s]++ {
			missing = append(missing, s)
		}
	}
	const show = 10
	return fmt.Sprintf("%d records, want %d: %d extra %q, %d missing %q",
		len(got), len(want), len(extra), extra[:min(show, len(extra))], len(missing), missing[:min(show, len(missing))])
}
