package exec

import (
	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
)

// A TopN over an append-only input that emits row numbers (Nexmark q19's
// shape) keeps each ranked row as it emitted it last: its values, then
// its row number. A row entering the top at rank r changes every rank
// from r down; each emits -U of the row the state keeps at that rank, as
// it is, and +U of a new row, which the state keeps from then on. So one
// row is built per changed rank, not two, and no rank's row is copied to
// be retracted.

// numberTop returns st with its rows numbered: a top restored from a
// snapshot taken before tops kept their row numbers (Numbered false) has
// each row's number appended.
func numberTop(st rankTop) rankTop {
	if st.Numbered {
		return st
	}
	rows := make([]row.Row, len(st.Rows))
	for j, r := range st.Rows {
		rows[j] = row.Row{Op: row.Insert, V: append(r.V[:len(r.V):len(r.V)], row.BigInt(int64(j)+1))}
	}
	st.Rows, st.Numbered = rows, true
	return st
}

// plainTop returns st with its rows as the input gave them: a numbered
// top restored into a TopN that keeps its rows without numbers (one over
// an updating input, or one that no longer selects the row number) has
// each row's number taken off.
func plainTop(st rankTop) rankTop {
	if !st.Numbered {
		return st
	}
	rows := make([]row.Row, len(st.Rows))
	for j, r := range st.Rows {
		rows[j] = row.Row{Op: row.Insert, V: r.V[: len(r.V)-1 : len(r.V)-1]}
	}
	st.Rows, st.Numbered = rows, false
	return st
}

// insertNumbered adds in to the numbered top st, emits the changelog of
// the ranks from Start to End it changes, and returns the new top; false
// when in ranks after End and changes nothing.
func (f *rankFn[K]) insertNumbered(ctx *weir.KeyedContext[K, row.Row], st rankTop, in row.Row) (rankTop, bool) {
	end := int(f.spec.End)
	i := rankInsertAt(f.spec.Order, st.Rows, in)
	if i >= end {
		return st, false
	}
	old := st.Rows
	n := min(len(old)+1, end)
	// A new slice and new rows: the state's are shared with snapshots
	// and with the rows emitted before.
	rows := make([]row.Row, n)
	copy(rows, old[:i])
	w := len(in.V)
	vals := make([]row.Value, 0, (n-i)*(w+1))
	for j := i; j < n; j++ {
		src := in.V
		if j > i {
			src = old[j-1].V[:w] // the row one rank up, without its number
		}
		at := len(vals)
		vals = append(append(vals, src...), row.BigInt(int64(j)+1))
		rows[j] = row.Row{Op: row.Insert, V: vals[at:len(vals):len(vals)]}
	}
	for j := max(i, int(f.spec.start())-1); j < n; j++ {
		switch {
		case j >= len(old):
			ctx.Emit(rows[j])
		case !row.EqualValues(old[j], rows[j]):
			ctx.Emit(row.Row{Op: row.UpdateBefore, V: old[j].V})
			ctx.Emit(row.Row{Op: row.UpdateAfter, V: rows[j].V})
		}
	}
	st.Rows = rows
	return st, true
}
