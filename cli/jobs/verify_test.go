package jobs

import (
	"errors"
	"strings"
	"testing"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/nexmark/queries"
)

// A changelog's updates depend on the order in which a parallel task
// consumed its inputs: --verify of a Nexmark changelog under exactly-once
// accepts another valid changelog of the same final table and refuses a
// changelog with a row lost or repeated.
func TestNexmarkVerifyComparesAChangelogsFinalTable(t *testing.T) {
	j, ok := cli.LookupJob("nexmark")
	if !ok {
		t.Fatal("no nexmark job")
	}
	verify := j.Verify
	if verify == nil { // what weir run --verify uses then
		verify = cli.VerifyLines
	}
	// Category 1's winning bids 10 and 20 came in this order in the
	// failure-free run; category 2 has one.
	ref := []string{
		`{"op":"+I","id":1,"final":10}`,
		`{"op":"+I","id":2,"final":7}`,
		`{"op":"-U","id":1,"final":10}`,
		`{"op":"+U","id":1,"final":15}`,
	}
	for _, c := range []struct {
		name string
		got  []string
		want error // nil: verified
	}{
		{"the other input order", []string{
			`{"op":"+I","id":2,"final":7}`,
			`{"op":"+I","id":1,"final":20}`,
			`{"op":"-U","id":1,"final":20}`,
			`{"op":"+U","id":1,"final":15}`,
		}, nil},
		{"an update lost", []string{
			`{"op":"+I","id":2,"final":7}`,
			`{"op":"-U","id":1,"final":20}`,
			`{"op":"+U","id":1,"final":15}`,
		}, queries.ErrBrokenChangelog},
		{"an update written twice", []string{
			`{"op":"+I","id":2,"final":7}`,
			`{"op":"+I","id":1,"final":20}`,
			`{"op":"-U","id":1,"final":20}`,
			`{"op":"+U","id":1,"final":15}`,
			`{"op":"-U","id":1,"final":20}`,
			`{"op":"+U","id":1,"final":15}`,
		}, queries.ErrBrokenChangelog},
		{"the last update lost", []string{
			`{"op":"+I","id":2,"final":7}`,
			`{"op":"+I","id":1,"final":20}`,
		}, errFinalTable},
		{"a row inserted twice", []string{
			`{"op":"+I","id":2,"final":7}`,
			`{"op":"+I","id":2,"final":7}`,
			`{"op":"+I","id":1,"final":20}`,
			`{"op":"-U","id":1,"final":20}`,
			`{"op":"+U","id":1,"final":15}`,
		}, errFinalTable},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := verify(weir.ExactlyOnce, ref, c.got)
			switch {
			case c.want == nil && err != nil:
				t.Fatalf("got %v, want the output verified", err)
			case c.want == errFinalTable && (err == nil || !strings.Contains(err.Error(), "final table")):
				t.Fatalf("got %v, want another final table reported", err)
			case c.want != nil && c.want != errFinalTable && !errors.Is(err, c.want):
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	// Queries that write plain rows are compared row by row.
	if err := verify(weir.ExactlyOnce, []string{`{"a":1}`, `{"a":2}`}, []string{`{"a":2}`}); err == nil {
		t.Fatal("a plain row lost was verified")
	}
}

// errFinalTable stands for a --verify error that names a final table
// other than the failure-free run's.
var errFinalTable = errors.New("another final table")
