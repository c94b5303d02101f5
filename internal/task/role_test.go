package task

import "testing"

// What each role of an incarnation implies, and what a takeover makes
// of a standby.
func TestRolesAndWhatTheyImply(t *testing.T) {
	for _, c := range []struct {
		role                                 role
		standby, alone, regenerates, counted bool
	}{
		{role{}, false, false, false, false},
		{restartedRole(false), false, true, true, true},
		{restartedRole(true), false, true, true, true},
		{standbyRole(false, false), true, false, false, false},
		{standbyRole(false, true), true, false, false, true},
		{standbyRole(true, false), true, false, false, false},
		{standbyRole(true, false).takeOver(), false, false, true, false},
		{standbyRole(false, true).takeOver(), false, false, false, true},
	} {
		got := []bool{c.role.standby(), c.role.restartedAlone(), c.role.regenerates(), c.role.countsFromState()}
		want := []bool{c.standby, c.alone, c.regenerates, c.counted}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s (late %v): standby, restarted alone, regenerates, counts from state = %v, want %v", c.role.kind, c.role.late, got, want)
				break
			}
		}
	}
}

// Only a standby takes over.
func TestOnlyAStandbyTakesOver(t *testing.T) {
	for _, r := range []role{{}, restartedRole(false), restartedRole(true), standbyRole(true, true).takeOver()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("a %s took over", r.kind)
				}
			}()
			r.takeOver()
		}()
	}
}
