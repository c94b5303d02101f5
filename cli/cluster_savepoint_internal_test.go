package cli

import (
	"slices"
	"testing"
)

// submit's --from-savepoint, given before JOB or among the job's flags,
// becomes the job flag --restore; two savepoints, or a savepoint and
// --restore, are refused.
func TestFromSavepointBecomesRestore(t *testing.T) {
	for _, tc := range []struct {
		args []string
		from string
		want []string // nil: refused
	}{
		{[]string{"-p", "3"}, "", []string{"-p", "3"}},
		{[]string{"-p", "3"}, "/sp/a", []string{"-p", "3", "--restore", "/sp/a"}},
		{[]string{"--from-savepoint", "/sp/a", "-p", "3"}, "", []string{"-p", "3", "--restore", "/sp/a"}},
		{[]string{"-p", "3", "--from-savepoint=/sp/a"}, "", []string{"-p", "3", "--restore", "/sp/a"}},
		{[]string{"--restore", "latest"}, "", []string{"--restore", "latest"}},
		{[]string{"--from-savepoint", "/sp/a"}, "/sp/b", nil},
		{[]string{"--restore", "latest"}, "/sp/a", nil},
		{[]string{"--from-savepoint"}, "", nil},
	} {
		got, err := fromSavepoint(tc.args, tc.from)
		if tc.want == nil {
			if err == nil {
				t.Errorf("fromSavepoint(%q, %q) = %q, want an error", tc.args, tc.from, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("fromSavepoint(%q, %q) = %q, %v; want %q", tc.args, tc.from, got, err, tc.want)
		}
	}
}
