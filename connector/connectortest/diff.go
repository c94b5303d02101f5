package connectortest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// maxShown bounds how many differences one error message lists.
const maxShown = 10

// show formats a record for an error message: strings quoted, everything
// else with field names.
func show(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case []byte:
		return strconv.Quote(string(v))
	}
	return fmt.Sprintf("%+v", v)
}

// loc is where a record was seen: which subtask (or -1 if unknown) and its
// index in that subtask's sequence.
type loc struct{ subtask, index int }

func (l loc) String() string {
	if l.subtask < 0 {
		return "#" + strconv.Itoa(l.index)
	}
	return fmt.Sprintf("subtask %d #%d", l.subtask, l.index)
}

// DiffMultiset compares got with want as multisets (order ignored) and
// returns "" if they are equal, or a description of what is missing and what
// is extra (including records seen more often than wanted, with where they
// were seen). got is per subtask; pass a single sequence as [][]T{seq}.
func DiffMultiset[T comparable](got [][]T, want []T) string {
	wantCount := make(map[T]int, len(want))
	for _, v := range want {
		wantCount[v]++
	}
	seen := make(map[T][]loc, len(want))
	total := 0
	for s, seq := range got {
		sub := s
		if len(got) == 1 {
			sub = -1
		}
		for i, v := range seq {
			seen[v] = append(seen[v], loc{sub, i})
			total++
		}
	}
	type extra struct {
		v    T
		locs []loc
	}
	var missing []string
	var extras []extra
	for _, v := range want {
		w := wantCount[v]
		if w == 0 {
			continue // already reported
		}
		if g := len(seen[v]); g < w {
			missing = append(missing, fmt.Sprintf("%s (got %d of %d)", show(v), g, w))
		}
		wantCount[v] = 0
		if g := len(seen[v]); g > w {
			extras = append(extras, extra{v, seen[v]})
		}
		delete(seen, v)
	}
	for v, locs := range seen { // records not wanted at all
		extras = append(extras, extra{v, locs})
	}
	if len(missing) == 0 && len(extras) == 0 {
		return ""
	}
	sort.Slice(extras, func(i, j int) bool { // deterministic message
		a, b := extras[i].locs[0], extras[j].locs[0]
		if a.subtask != b.subtask {
			return a.subtask < b.subtask
		}
		return a.index < b.index
	})
	var b strings.Builder
	fmt.Fprintf(&b, "got %d records, want %d", total, len(want))
	if len(missing) > 0 {
		fmt.Fprintf(&b, "\nmissing %d distinct records:", len(missing))
		for i, m := range missing {
			if i == maxShown {
				fmt.Fprintf(&b, "\n\t... and %d more", len(missing)-maxShown)
				break
			}
			b.WriteString("\n\t" + m)
		}
	}
	if len(extras) > 0 {
		fmt.Fprintf(&b, "\nunexpected or repeated %d distinct records:", len(extras))
		for i, e := range extras {
			if i == maxShown {
				fmt.Fprintf(&b, "\n\t... and %d more", len(extras)-maxShown)
				break
			}
			w := 0
			for _, v := range want {
				if v == e.v {
					w++
				}
			}
			where := make([]string, 0, len(e.locs))
			for j, l := range e.locs {
				if j == maxShown {
					where = append(where, "...")
					break
				}
				where = append(where, l.String())
			}
			fmt.Fprintf(&b, "\n\t%s read %d times, want %d: at %s", show(e.v), len(e.locs), w, strings.Join(where, ", "))
		}
	}
	return b.String()
}

// DiffSequence compares two sequences in order and returns "" if they are
// equal, or where they first differ.
func DiffSequence[T comparable](got, want []T) string {
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			return fmt.Sprintf("differs at #%d: got %s, want %s (got %d records, want %d)",
				i, show(got[i]), show(want[i]), len(got), len(want))
		}
	}
	switch {
	case len(got) > len(want):
		return fmt.Sprintf("got %d records, want %d: extra from #%d: %s", len(got), len(want), len(want), show(got[len(want)]))
	case len(got) < len(want):
		return fmt.Sprintf("got %d records, want %d: missing from #%d: %s", len(got), len(want), len(got), show(want[len(got)]))
	}
	return ""
}
