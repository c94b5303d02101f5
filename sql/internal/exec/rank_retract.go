package exec

import (
	"cmp"
	"slices"

	"github.com/weir-stream/weir/internal/sql/row"
)

// rankCount is a distinct row of a partition of an updating TopN input:
// how many times it is held, and its arrival number, which orders rows
// equal by the ORDER BY.
type rankCount struct {
	Row        row.Row
	Count, Seq int64
}

// rankBuffer is how many of a partition's first rows an updating TopN
// keeps sorted: beyond the End ranked, a reserve that retractions of
// ranked rows draw on before the partition's rows must be scanned.
func rankBuffer(end int64) int { return int(2 * end) }

// update applies one row of an updating input to the partition's state
// and returns its new buffer (Flink's RetractableTopNFunction).
func (f *rankFn[K]) update(st rankTop, in row.Row) rankTop {
	id := joinRowID(in.V)
	e, held := f.all.Get(id)
	if in.Op.Retracts() {
		if !held {
			return st // not held (or expired): nothing to retract
		}
		if e.Count--; e.Count == 0 {
			f.all.Delete(id)
		} else {
			f.all.Put(id, e)
		}
		st.Total--
		i := slices.IndexFunc(st.Rows, func(r row.Row) bool { return row.EqualValues(r, in) })
		if i < 0 {
			return st
		}
		rows := slices.Delete(slices.Clone(st.Rows), i, i+1)
		if int64(len(rows)) < f.spec.End && st.Total > int64(len(rows)) {
			rows = f.refill(rows)
		}
		st.Rows = rows
		return st
	}
	if !held {
		e = rankCount{Row: row.Row{Op: row.Insert, V: in.V}, Seq: st.Next}
		st.Next++
	}
	e.Count++
	f.all.Put(id, e)
	complete := st.Total == int64(len(st.Rows)) // the buffer holds every row
	st.Total++
	// Every row outside the buffer sorts after its last: a row sorting
	// before that joins the buffer, and so does any row while the buffer
	// holds every row and has room.
	i := rankInsertAt(f.spec.Order, st.Rows, in)
	if i < len(st.Rows) || complete && len(st.Rows) < rankBuffer(f.spec.End) {
		rows := slices.Insert(slices.Clone(st.Rows), i, e.Row)
		st.Rows = rows[:min(len(rows), rankBuffer(f.spec.End))]
	}
	return st
}

// refill appends to the buffer rows the best of the partition's rows it
// does not hold, up to rankBuffer(End); they all sort after its rows.
func (f *rankFn[K]) refill(rows []row.Row) []row.Row {
	inBuffer := map[string]int64{}
	for _, r := range rows {
		inBuffer[joinRowID(r.V)]++
	}
	var rest []rankCount
	f.all.All(func(id string, e rankCount) bool {
		for range e.Count - inBuffer[id] {
			rest = append(rest, e)
		}
		return true
	})
	slices.SortFunc(rest, func(a, b rankCount) int {
		if c := rankCompare(f.spec.Order, a.Row, b.Row); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	for _, e := range rest[:min(len(rest), rankBuffer(f.spec.End)-len(rows))] {
		rows = append(rows, e.Row)
	}
	return rows
}
