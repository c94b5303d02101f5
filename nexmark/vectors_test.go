package nexmark

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// TestBeam230Vectors compares the first 10,000 events of the default
// configuration with those printed by Beam's released generator
// (beam-sdks-java-nexmark 2.3.0, see testdata/javaref/README.md). Every
// field must match exactly except the "extra" padding, which Beam changed
// after 2.3.0 (weir follows current Beam), and the bid channel and url,
// which are drawn after it.
func TestBeam230Vectors(t *testing.T) {
	f, err := os.Open("testdata/beam230_default_10000.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := NewGenerator(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var i int64
	var e Event
	for sc.Scan() {
		var want, got map[string]any
		if err := json.Unmarshal(sc.Bytes(), &want); err != nil {
			t.Fatalf("vector %d: %v", i, err)
		}
		g.EventAt(i, &e)
		if err := json.Unmarshal(AppendJSON(nil, &e), &got); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		for _, k := range []string{"extra", "channel", "url"} {
			delete(want, k)
			delete(got, k)
		}
		if len(got) != len(want) {
			t.Fatalf("event %d: fields %v, Beam %v", i, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("event %d: %s = %v, Beam 2.3.0 has %v", i, k, got[k], v)
			}
		}
		i++
	}
	if i != 10000 {
		t.Fatalf("read %d vectors, want 10000", i)
	}
}
