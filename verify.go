package weir

import "fmt"

// VerifyLines checks output rows (JSON lines) against those of a
// failure-free run, as guarantee g promises for records: exactly-once the
// same multiset, at-least-once a superset, at-most-once a subset. Jobs
// whose rows are aggregates give their own check in Job.Verify.
func VerifyLines(g Guarantee, ref, got []string) error {
	want := map[string]int{}
	for _, l := range ref {
		want[l]++
	}
	have := map[string]int{}
	for _, l := range got {
		have[l]++
	}
	for l, n := range want {
		if have[l] < n && g != AtMostOnce {
			return fmt.Errorf("row %s appears %d times, want %d", l, have[l], n)
		}
	}
	for l, n := range have {
		if n > want[l] && g != AtLeastOnce {
			return fmt.Errorf("row %s appears %d times, the failure-free run has it %d times", l, n, want[l])
		}
	}
	return nil
}
