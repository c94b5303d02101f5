package cluster

import (
	"slices"
	"testing"
)

// A rescale replaces the parallelism in whichever flag form the job was
// submitted with, and leaves the other arguments alone.
func TestARescaleReplacesTheParallelismInEveryFlagForm(t *testing.T) {
	cases := []struct {
		args []string
		was  string
	}{
		{[]string{"--out", "o", "-p", "2"}, "2"},
		{[]string{"--parallelism", "auto", "--out", "o"}, "auto"},
		{[]string{"--parallelism=3", "--out", "o"}, "3"},
		{[]string{"-p=4", "--out", "o"}, "4"},
		{[]string{"-p5", "--out", "o"}, "5"},
		{[]string{"-p", "2", "--out", "o", "--parallelism", "6"}, "6"},
		{[]string{"--out", "o"}, ""},
	}
	for _, c := range cases {
		if got := parallelismArg(c.args); got != c.was {
			t.Errorf("parallelismArg(%q) = %q, want %q", c.args, got, c.was)
		}
		got := withParallelism(c.args, 8)
		if want := []string{"--out", "o", "--parallelism", "8"}; !slices.Equal(got, want) {
			t.Errorf("withParallelism(%q, 8) = %q, want %q", c.args, got, want)
		}
	}
}
