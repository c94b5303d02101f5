package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connector/connectortest"
	"github.com/weir-stream/weir/connectors/objstore"
)

var eventCSV = objstore.CSV(
	func(e event) []string {
		return []string{strconv.FormatInt(e.ID, 10), e.Key, strconv.FormatInt(e.Time, 10)}
	},
	func(row []string) (event, error) {
		if len(row) != 3 {
			return event{}, fmt.Errorf("%d fields, want 3", len(row))
		}
		id, err1 := strconv.ParseInt(row[0], 10, 64)
		tm, err2 := strconv.ParseInt(row[2], 10, 64)
		return event{ID: id, Key: row[1], Time: tm}, errors.Join(err1, err2)
	},
	objstore.CSVOptions{Header: []string{"id", "key", "time"}})

var formats = []struct {
	name   string
	format objstore.Format[event]
}{
	{"jsonl", objstore.JSONLines[event]()},
	{"csv", eventCSV},
	{"parquet", objstore.Parquet[event]()},
}

func someEvents(from, to int64) []event {
	var out []event
	for i := from; i < to; i++ {
		e := eventAt(i)
		e.Key += `, "quoted"` // CSV must quote it, JSON escape it
		out = append(out, e)
	}
	return out
}

// writeObjects writes events through a sink of parallelism 3 without
// checkpoints, each writer in several part files.
func writeObjects(t *testing.T, loc string, f objstore.Format[event], events []event) {
	t.Helper()
	sink := objstore.NewSink(objstore.SinkConfig[event]{Location: loc, Format: f, Bucket: func(e event) string { return e.Key[:2] }})
	if _, err := connectortest.WriteAll(context.Background(), sink, events, 3); err != nil {
		t.Fatal(err)
	}
}

// The sink without checkpoints passes the sink conformance suite in each
// format, read back by the source; the source passes the source suite.
func TestFormatsConformance(t *testing.T) {
	srv := s3Server(t)
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			connectortest.TestSink(t, connectortest.SinkCase[event]{
				New: func(t *testing.T) connector.Sink[event] {
					loc := srv.location()
					return locSink{objstore.NewSink(objstore.SinkConfig[event]{Location: loc, Format: f.format}), loc}
				},
				ReadBack: func(t *testing.T, s connector.Sink[event]) []event {
					loc := s.(locSink).loc
					got, err := connectortest.ReadAll(context.Background(), objstore.NewSource(objstore.SourceConfig[event]{Location: loc, Format: f.format}), 1)
					if err != nil {
						t.Fatal(err)
					}
					return got[0]
				},
				Records: someEvents(0, 50),
			})
			loc := srv.location()
			writeObjects(t, loc, f.format, someEvents(0, 200))
			connectortest.TestSource(t, connectortest.SourceCase[event]{
				New: func(*testing.T) connector.Source[event] {
					return objstore.NewSource(objstore.SourceConfig[event]{Location: loc, Format: f.format})
				},
				Want:         someEvents(0, 200),
				Parallelism:  []int{1, 2, 5},
				BadPositions: []connector.Position{[]byte("{"), []byte("[1]")},
			})
		})
	}
}

// locSink is a sink with the location it writes to.
type locSink struct {
	connector.Sink[event]
	loc string
}

// Positions taken at one parallelism and rescaled to another yield, read
// to the end, exactly the records not read before; rescaled positions
// rescale again.
func TestSourceRescaledPositionsReadEveryRemainingRecordOnce(t *testing.T) {
	loc := s3Server(t).location()
	all := someEvents(0, 300)
	writeObjects(t, loc, objstore.JSONLines[event](), all)
	src := objstore.NewSource(objstore.SourceConfig[event]{Location: loc, Format: objstore.JSONLines[event]()})
	for _, path := range [][]int{{2, 1}, {2, 3}, {3, 2, 5, 1}} {
		seen := map[event]int{}
		n := path[0]
		pos := make([]connector.Position, n)
		for step, next := range path[1:] {
			for i := range n {
				got, p := connectortest.ReadSome(t, src, i, n, pos[i], 7*i+step+5, 3)
				for _, e := range got {
					seen[e]++
				}
				pos[i] = p
			}
			var err error
			if pos, err = src.(connector.Rescaler).Rescale(pos, next); err != nil {
				t.Fatalf("%v: rescale to %d: %v", path, next, err)
			}
			n = next
		}
		for i := range n {
			got, _ := connectortest.ReadSome(t, src, i, n, pos[i], -1, 16)
			for _, e := range got {
				seen[e]++
			}
		}
		for e, k := range seen {
			if k != 1 {
				t.Errorf("%v: %v read %d times", path, e, k)
			}
		}
		if len(seen) != len(all) {
			t.Errorf("%v: read %d distinct records, want %d", path, len(seen), len(all))
		}
	}
}

// A continuous source reads the objects there at Open, then those that
// appear later, and does not end.
func TestContinuousSourceDiscoversNewObjects(t *testing.T) {
	ctx := context.Background()
	loc := s3Server(t).location()
	writeObjects(t, loc, objstore.JSONLines[event](), someEvents(0, 10))
	src := objstore.NewSource(objstore.SourceConfig[event]{Location: loc, Format: objstore.JSONLines[event](), DiscoveryInterval: time.Millisecond})
	r, err := src.Open(ctx, connector.SubtaskInfo{Subtask: 0, Parallelism: 1}, nil)
	must(t, err)
	defer r.Close()
	readUntil := func(want int) map[event]bool {
		seen := map[event]bool{}
		buf := make([]event, 4)
		for len(seen) < want { // waits for the records; the test's deadline bounds it
			n, err := r.Read(ctx, buf)
			must(t, err)
			for _, e := range buf[:n] {
				if seen[e] {
					t.Fatalf("%v read twice", e)
				}
				seen[e] = true
			}
		}
		return seen
	}
	readUntil(10)
	writeObjects(t, loc, objstore.JSONLines[event](), someEvents(10, 25))
	seen := readUntil(15)
	for _, e := range someEvents(10, 25) {
		if !seen[e] {
			t.Fatalf("%v not read", e)
		}
	}
}

// A record that does not decode fails the reader with a MalformedError
// naming the object and the record.
func TestSourceLocatesAMalformedRecord(t *testing.T) {
	ctx := context.Background()
	loc := s3Server(t).location()
	sink := objstore.NewSink(objstore.SinkConfig[string]{Location: loc, Format: objstore.JSONLines[string]()})
	if _, err := connectortest.WriteAll(ctx, sink, []string{"a", "b"}, 1); err != nil {
		t.Fatal(err)
	}
	// Read the strings as numbers.
	r, err := objstore.NewSource(objstore.SourceConfig[int]{Location: loc, Format: objstore.JSONLines[int]()}).
		Open(ctx, connector.SubtaskInfo{Subtask: 0, Parallelism: 1}, nil)
	must(t, err)
	defer r.Close()
	_, err = r.Read(ctx, make([]int, 4))
	var me *connector.MalformedError
	if !errors.As(err, &me) || !strings.Contains(me.Where, "/part-0-0-") || !strings.HasSuffix(me.Where, "record 1") {
		t.Fatalf("error %v, want a MalformedError at record 1 of the part file", err)
	}
}
