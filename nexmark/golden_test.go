package nexmark

import (
	"bytes"
	"os"
	"testing"
)

// The golden files beam_*_200.jsonl in testdata/ were produced by the Java
// 17 program testdata/javaref/RefGen.java, which ran Apache Beam's released Nexmark generator: the
// classes of Maven artifact org.apache.beam:beam-sdks-java-nexmark:2.3.0 (the
// only release of the Nexmark module found on Maven Central), with one
// class, StringsGenerator, replaced by its current Beam source
// (sdks/java/testing/nexmark, which since 2.3.0 packs six letters into each
// random int for the "extra" strings). The program built
// new GeneratorConfig(config, 2015-07-15T00:00:00Z, 0, numEvents, 0), split it
// with GeneratorConfig.split when asked, and for each generator printed
// Generator.nextEvent() results in the AppendJSON format, one per line,
// generators one after another. For bids it also replayed
// BidGenerator.nextBid with new java.util.Random(eventId), checked the replay
// equals the generator's bid, and kept drawing from that Random to pick the
// channel and URL with the rules described in channel.go, from URL tables
// built with java.util.Random(channelTableSeed) in Flink's order.
//
// Beyond these files the same program and this package's JSON output were
// compared byte for byte on millions of events over a dozen configurations.
var goldenCases = []struct {
	file  string
	cfg   func() Config
	split int // 0: the unsplit generator
	n     int64
}{
	{
		// Beam's default NexmarkConfiguration, numEvents 100000, first 200.
		file:  "testdata/beam_default_200.jsonl",
		cfg:   DefaultConfig,
		split: 0,
		n:     200,
	},
	{
		// numEvents 400 split into 4 generators, first 50 events of each; a
		// SINE rate between 100 and 400 events/s over 10 s (so timestamps
		// cross rate steps), shuffled in groups of 10 events.
		file: "testdata/beam_split4_sine_200.jsonl",
		cfg: func() Config {
			c := DefaultConfig()
			c.NumEvents = 400
			c.NumEventGenerators = 4
			c.FirstEventRate = 100
			c.NextEventRate = 400
			c.RateShape = RateShapeSine
			c.RatePeriodSec = 10
			c.OutOfOrderGroupSize = 10
			return c
		},
		split: 4,
		n:     50,
	},
}

func TestGolden(t *testing.T) {
	for _, gc := range goldenCases {
		t.Run(gc.file, func(t *testing.T) {
			want, err := os.ReadFile(gc.file)
			if err != nil {
				t.Fatal(err)
			}
			g, err := NewGenerator(gc.cfg())
			if err != nil {
				t.Fatal(err)
			}
			gens := []*Generator{g}
			if gc.split > 0 {
				gens = g.Split(gc.split)
			}
			// Sequentially through a Cursor, and by random access in
			// reverse order.
			var seq, rnd []byte
			var e Event
			for _, g := range gens {
				c := g.Cursor(0)
				for c.Position() < gc.n && c.Next(&e) {
					seq = AppendJSONLine(seq, &e)
				}
				lines := make([][]byte, gc.n)
				for i := gc.n - 1; i >= 0; i-- {
					g.EventAt(i, &e)
					lines[i] = AppendJSONLine(nil, &e)
				}
				rnd = append(rnd, bytes.Join(lines, nil)...)
			}
			compareLines(t, "cursor", seq, want)
			compareLines(t, "EventAt", rnd, want)
		})
	}
}

func compareLines(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	gl := bytes.Split(got, []byte("\n"))
	wl := bytes.Split(want, []byte("\n"))
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if !bytes.Equal(gl[i], wl[i]) {
			t.Fatalf("%s: line %d differs:\n got %s\nwant %s", what, i+1, gl[i], wl[i])
		}
	}
	t.Fatalf("%s: %d lines, want %d", what, len(gl), len(wl))
}
