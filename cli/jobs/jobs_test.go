package jobs

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connectors/file"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// readParts returns the rows of every part file in dir, per file.
func readParts[T any](t *testing.T, dir string) [][]T {
	t.Helper()
	parts, err := file.Parts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]T
	for _, p := range parts {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var rows []T
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var r T
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			rows = append(rows, r)
		}
		f.Close()
		out = append(out, rows)
	}
	return out
}

func runPipeline(t *testing.T, par int, build func(p *weir.Pipeline, cfg cli.JobConfig)) string {
	t.Helper()
	dir := t.TempDir()
	p := weir.NewPipeline(weir.WithParallelism(par), weir.WithName(t.Name()))
	build(p, cli.JobConfig{Output: dir})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return dir
}

// keycount's result must not depend on parallelism: the same multiset of
// rows, and for each key the same sequence of rows, at 1, 2 and 8.
func TestKeyCountIsDeterministicAcrossParallelism(t *testing.T) {
	c := KeyCountConfig{Events: 200_000, Keys: 300, Window: 100 * time.Millisecond, TPS: 100_000, Seed: 7}
	// The expected counts, computed directly.
	want := map[KeyCount]int{}
	counts := map[[2]int64]int64{}
	for i := range c.Events {
		e := c.Event(i)
		start := e.Time - e.Time%100
		counts[[2]int64{e.Key, start}]++
	}
	for k, n := range counts {
		want[KeyCount{Key: k[0], WindowStart: k[1], WindowEnd: k[1] + 100, Count: n}] = 1
	}
	var reference map[int64][]KeyCount
	for _, par := range []int{1, 2, 8} {
		dir := runPipeline(t, par, func(p *weir.Pipeline, cfg cli.JobConfig) { KeyCountPipeline(p, c, cfg) })
		got := map[KeyCount]int{}
		perKey := map[int64][]KeyCount{}
		for _, part := range readParts[KeyCount](t, dir) {
			for _, r := range part {
				got[r]++
				perKey[r.Key] = append(perKey[r.Key], r)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("parallelism %d: %d distinct rows, want %d", par, len(got), len(want))
		}
		for r, n := range got {
			if want[r] != n {
				t.Fatalf("parallelism %d: row %+v appears %d times, want %d", par, r, n, want[r])
			}
		}
		for k, rows := range perKey {
			if !slices.IsSortedFunc(rows, func(a, b KeyCount) int { return int(a.WindowStart - b.WindowStart) }) {
				t.Fatalf("parallelism %d: key %d's windows are out of order: %v", par, k, rows)
			}
		}
		if reference == nil {
			reference = perKey
		} else {
			for k, rows := range perKey {
				if !slices.Equal(rows, reference[k]) {
					t.Fatalf("parallelism %d: key %d's rows differ from parallelism 1", par, k)
				}
			}
		}
	}
}

func TestWordCountIsDeterministicAcrossParallelism(t *testing.T) {
	in := filepath.Join(t.TempDir(), "text.txt")
	var text strings.Builder
	want := map[string]int64{}
	for i := range 5000 {
		w := fmt.Sprintf("w%d", i*i%97)
		want[w]++
		text.WriteString(w)
		if i%11 == 0 {
			text.WriteString("\n")
		} else {
			text.WriteString(" \t ")
		}
	}
	if err := os.WriteFile(in, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, par := range []int{1, 2, 8} {
		dir := runPipeline(t, par, func(p *weir.Pipeline, cfg cli.JobConfig) { WordCountPipeline(p, file.Lines(in), cfg) })
		got := map[string]int64{}
		for _, part := range readParts[WordCount](t, dir) {
			for _, r := range part {
				if _, dup := got[r.Word]; dup {
					t.Fatalf("parallelism %d: word %q counted twice", par, r.Word)
				}
				got[r.Word] = r.Count
			}
		}
		if len(got) != len(want) {
			t.Fatalf("parallelism %d: %d words, want %d", par, len(got), len(want))
		}
		for w, n := range want {
			if got[w] != n {
				t.Fatalf("parallelism %d: %q counted %d, want %d", par, w, got[w], n)
			}
		}
	}
}

func TestSplitWordsMatchesFields(t *testing.T) {
	for _, line := range []string{"", "  ", "a", " a  b\tc ", "héllo wörld", "x\u00a0y"} {
		var got []string
		splitWords(line, func(w string) { got = append(got, w) })
		if want := strings.Fields(line); !slices.Equal(got, want) {
			t.Errorf("splitWords(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestKeyCountValidate(t *testing.T) {
	bad := []KeyCountConfig{
		{Events: -1, Keys: 1, Window: time.Second, TPS: 1},
		{Events: 1, Keys: 0, Window: time.Second, TPS: 1},
		{Events: 1, Keys: 1, Window: 0, TPS: 1},
		{Events: 1, Keys: 1, Window: time.Second, TPS: 0},
	}
	for _, c := range bad {
		if c.Validate() == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
