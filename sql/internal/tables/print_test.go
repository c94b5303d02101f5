package tables

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/collection"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/sql/types"
)

func TestPrintWritesFlinksPrintFormat(t *testing.T) {
	tb := allTypes(map[string]string{"connector": "print", "print-identifier": "out"})
	sink, err := NewSink(tb, true)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	sink.(*printSink).w = &b
	for _, c := range []struct {
		parallelism int
		want        string
	}{
		{1, "out> -U[-7, 1099511627776, TRUE, 0.1, -0.05, a\"b\\<\n\x01é, (2024-01-01 00:00:00.000, +0 00:00:01.500), NULL]\n"},
		{3, "out:3> -U[-7, 1099511627776, TRUE, 0.1, -0.05, a\"b\\<\n\x01é, (2024-01-01 00:00:00.000, +0 00:00:01.500), NULL]\n"},
	} {
		b.Reset()
		w, err := sink.Open(context.Background(), connector.SubtaskInfo{Subtask: c.parallelism - 1, Parallelism: c.parallelism})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(context.Background(), []row.Row{allTypesRow(row.UpdateBefore)}); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Fatalf("got  %q\nwant %q", b.String(), c.want)
		}
	}
	delete(tb.Options, "print-identifier")
	sink, _ = NewSink(tb, false)
	sink.(*printSink).w = &b
	b.Reset()
	w, _ := sink.Open(context.Background(), connector.SubtaskInfo{Parallelism: 1})
	w.Write(context.Background(), []row.Row{{V: []row.Value{row.Int(1), row.Null(), row.Bool(false), row.Double(1e7), row.Decimal(100), row.String("abc"), row.Timestamp(0), row.Interval(-90061001), row.BigInt(2)}}})
	if want := "+I[1, NULL, FALSE, 1.0E7, 1.00, abc, (1970-01-01 00:00:00.000, -1 01:01:01.001), 2]\n"; b.String() != want {
		t.Fatalf("got  %q\nwant %q", b.String(), want)
	}
	if _, err := NewSink(allTypes(map[string]string{"connector": "print", "standard-error": "maybe"}), false); !errors.Is(err, ErrOption) {
		t.Fatalf("bad standard-error: %v", err)
	}
	meta := allTypes(map[string]string{"connector": "print"})
	meta.Columns = append(meta.Columns, Column{Path: []string{"ts"}, Type: types.TimestampType, Metadata: "timestamp"})
	if _, err := NewSink(meta, false); !errors.Is(err, ErrColumn) {
		t.Fatalf("a metadata column: %v", err)
	}
	if _, err := NewSource(allTypes(map[string]string{"connector": "print"}), nil); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("reading print: %v", err)
	}
}

func TestJavaDoubleText(t *testing.T) {
	for f, want := range map[float64]string{1: "1.0", 0.001: "0.001", 1.5e-5: "1.5E-5", 1e7: "1.0E7", 1234567.5: "1234567.5", -2.5e300: "-2.5E300", 0: "0.0"} {
		if got := string(appendJavaDouble(nil, f)); got != want {
			t.Errorf("%v: %s, want %s", f, got, want)
		}
	}
}

// An exactly-once job accepts the blackhole sink (it is idempotent).
func TestBlackholeServesExactlyOnceJobs(t *testing.T) {
	sink, err := NewSink(allTypes(map[string]string{"connector": "blackhole"}), true)
	if err != nil {
		t.Fatal(err)
	}
	p := weir.NewPipeline(weir.WithGuarantee(weir.ExactlyOnce), weir.WithCheckpoints(weir.CheckpointConfig{Interval: 20 * time.Millisecond}))
	weir.To(weir.FromSource(p, "rows", collection.Of(allTypesRow(row.Insert))), "out", sink)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSink(allTypes(map[string]string{"connector": "blackhole", "path": "x"}), false); !errors.Is(err, ErrOption) {
		t.Fatalf("blackhole with an option: %v", err)
	}
}
