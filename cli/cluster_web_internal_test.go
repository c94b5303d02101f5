package cli

import (
	"slices"
	"testing"
)

// weir submit takes --http ADDR (or --http=ADDR) out of the job's flags:
// it is the command's, never sent to the coordinator.
func TestSubmitTakesHTTPOutOfTheJobsFlags(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		rest     []string // nil: refused
		httpAddr string
	}{
		{[]string{"-p", "3"}, []string{"-p", "3"}, ""},
		{[]string{"-p", "3", "--http", "127.0.0.1:0", "--wait"}, []string{"-p", "3", "--wait"}, "127.0.0.1:0"},
		{[]string{"--http=:8081", "-p", "3"}, []string{"-p", "3"}, ":8081"},
		{[]string{"-p", "3", "--http"}, nil, ""},
	} {
		rest, addr, err := takeFlag(tc.args, "http")
		if tc.rest == nil {
			if err == nil {
				t.Errorf("takeFlag(%q) = %q, %q; want an error", tc.args, rest, addr)
			}
			continue
		}
		if err != nil || !slices.Equal(rest, tc.rest) || addr != tc.httpAddr {
			t.Errorf("takeFlag(%q) = %q, %q, %v; want %q, %q", tc.args, rest, addr, err, tc.rest, tc.httpAddr)
		}
	}
}
