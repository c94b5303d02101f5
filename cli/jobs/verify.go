package jobs

import (
	"encoding/json"
	"fmt"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/nexmark/queries"
)

// verifyCounts checks rows that are counts per group against a
// failure-free run's. Exactly-once: the same rows. At-least-once: every
// group of the reference is present and its highest count is at least the
// reference's (replays may count twice). At-most-once: the counts of a
// group sum to at most the reference's (failures lose counts, never add).
// No guarantee allows a group the reference lacks.
func verifyCounts(g weir.Guarantee, ref, got []string, parse func(string) (string, int64, error)) error {
	if g == weir.ExactlyOnce || g == weir.None {
		return cli.VerifyLines(weir.ExactlyOnce, ref, got)
	}
	want := map[string]int64{}
	for _, l := range ref {
		k, n, err := parse(l)
		if err != nil {
			return fmt.Errorf("reference row %q: %w", l, err)
		}
		want[k] += n
	}
	best, sum := map[string]int64{}, map[string]int64{}
	for _, l := range got {
		k, n, err := parse(l)
		if err != nil {
			return fmt.Errorf("row %q: %w", l, err)
		}
		if _, ok := want[k]; !ok {
			return fmt.Errorf("row %s: the failure-free run has no %s", l, k)
		}
		best[k] = max(best[k], n)
		sum[k] += n
	}
	for k, n := range want {
		switch g {
		case weir.AtLeastOnce:
			if best[k] < n {
				return fmt.Errorf("%s counted at most %d, the failure-free run %d: input was lost", k, best[k], n)
			}
		case weir.AtMostOnce:
			if sum[k] > n {
				return fmt.Errorf("%s counted %d in all, more than the failure-free run's %d: input counted twice", k, sum[k], n)
			}
		}
	}
	return nil
}

func verifyKeyCount(g weir.Guarantee, ref, got []string) error {
	return verifyCounts(g, ref, got, func(l string) (string, int64, error) {
		var r KeyCount
		err := json.Unmarshal([]byte(l), &r)
		return fmt.Sprintf("key %d in [%d, %d)", r.Key, r.WindowStart, r.WindowEnd), r.Count, err
	})
}

func verifyWordCount(g weir.Guarantee, ref, got []string) error {
	return verifyCounts(g, ref, got, func(l string) (string, int64, error) {
		var r WordCount
		err := json.Unmarshal([]byte(l), &r)
		return fmt.Sprintf("word %q", r.Word), r.Count, err
	})
}

// verifyNexmark checks a Nexmark query's rows. A query whose result
// updates writes a changelog, and the updates a row goes through depend on
// the order in which a parallel task consumed its inputs, so two
// failure-free runs write different rows. Exactly-once then requires a
// valid changelog (no row retracted that is not in the table) whose final
// table is the failure-free run's; a lost or repeated row breaks one or
// the other. Other guarantees, and queries that write plain rows, are
// checked by VerifyLines.
func verifyNexmark(g weir.Guarantee, ref, got []string) error {
	if (g != weir.ExactlyOnce && g != weir.None) || !queries.IsChangelog(ref) {
		return cli.VerifyLines(g, ref, got)
	}
	want, err := queries.ApplyChangelog(ref)
	if err != nil {
		return fmt.Errorf("the failure-free run's rows: %w", err)
	}
	have, err := queries.ApplyChangelog(got)
	if err != nil {
		return fmt.Errorf("%w: a row was lost or written twice", err)
	}
	if err := cli.VerifyLines(weir.ExactlyOnce, want, have); err != nil {
		return fmt.Errorf("the final table of the changelog: %w", err)
	}
	return nil
}
