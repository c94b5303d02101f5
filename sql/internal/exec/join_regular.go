package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/sql/row"
	"github.com/weir-stream/weir/internal/task"
)

// RegularJoin is Flink's streaming regular join (StreamingJoinOperator):
// an unwindowed equi-join of l and r on spec.LeftKeys = spec.RightKeys
// and spec.Cond, of spec.Kind. It reads spec.Kind, LeftKeys, RightKeys,
// LeftWidth, RightWidth, Cond, StateTTL and Name.
//
// Input: any changelog on either side. +I and +U rows add a row to their
// side, -U and -D rows retract an equal earlier row (a retraction of a
// row the state does not hold, as after its time-to-live, retracts
// nothing but is still joined with the other side's matches).
//
// Output: the left columns then the right columns, NULLs padding the
// side an outer join's unmatched row lacks. The changelog follows Flink:
//   - an inner join emits each new match with the input row's op (+I/+U;
//     -U/-D for a retracted input row), so an inner join of append-only
//     inputs is append-only;
//   - an outer join emits +I for new matches and -D for the matches a row
//     of an outer side retracts (a row of an inner side retracts its
//     matches with its own op, -U or -D);
//     an unmatched row of an outer side is emitted as +I padded, and that
//     padded row is retracted (-D) when its first match arrives and
//     emitted again (+I) when its last match is retracted.
//
// State: both sides' rows, keyed by the join key, each distinct row with
// its count and, on an outer side, its number of matches (Flink's
// JoinRecordStateView), under the hash of its values (joinRows); a side
// that only inserts (spec.LeftAppendOnly, RightAppendOnly) keeps its rows
// one after another instead (joinList), unless it is an outer side or
// the state has a time-to-live. Rows
// are held encoded and decoded each time they are matched: a checkpoint
// copies their bytes, and the garbage collector has no pointers to
// follow in them. Emitted rows share the strings of those bytes. Without
// a time-to-live the state grows with the number of distinct rows of
// each side for as long as the job runs.
// Rows with a NULL key are not stored: they match nothing, and on an outer
// side they pass through padded.
//
// Errors: a spec whose key lists differ in length, or of an unknown kind,
// panics while the pipeline is built; an error of Cond fails the job.
func RegularJoin(l, r weir.Stream[row.Row], spec JoinSpec) weir.Stream[row.Row] {
	if err := spec.check(); err != nil {
		panic(err)
	}
	if spec.IntKey {
		return regularJoinBy(l, r, spec, intKey(spec.LeftKeys[0]), intKey(spec.RightKeys[0]))
	}
	return regularJoinBy(l, r, spec, stringKey(spec.LeftKeys), stringKey(spec.RightKeys))
}

// regularJoinBy is RegularJoin keyed by lk and rk.
func regularJoinBy[K comparable](l, r weir.Stream[row.Row], spec JoinSpec, lk, rk func(row.Row) K) weir.Stream[row.Row] {
	return weir.CoProcess(weir.KeyBy(l, lk), weir.KeyBy(r, rk),
		func() weir.CoProcessFunction[K, row.Row, row.Row, row.Row] {
			return &regularJoin[K]{joiner: joiner{spec: spec}}
		}, spec.opts("join-"+spec.Kind.String())...)
}

// stringKey returns the key of a row by columns cols: their encoding.
func stringKey(cols []int) func(row.Row) string {
	cols = slices.Clone(cols)
	return func(r row.Row) string {
		var buf [64]byte
		return string(row.Key(buf[:0], r, cols))
	}
}

// intKey returns the key of a row by integer column col: its value (0 for
// a NULL, which matches nothing and is never stored).
func intKey(col int) func(row.Row) int64 {
	return func(r row.Row) int64 { return r.V[col].I }
}

// joinEntry is a distinct row in a side's state: its encoding (that of
// row.Row.AppendBinary, op +I), how many times it is held, and on an
// outer side how many rows of the other side it matches. The encoding is
// never changed once made: decoded rows share its strings
// (row.AppendShared).
type joinEntry struct {
	Row   []byte
	Count int64
	Assoc int64
}

// joinRows are a side's distinct rows of one join key whose values hash
// alike (rowHash): almost always one. A side's state maps each row hash
// to them, so that a row is held once, not also as its map key. They are
// never changed in place once in state: a change stores a new slice, so
// checkpoints share them copy-on-write.
type joinRows []joinEntry

// ImmutableInState declares joinRows never changed in place (weir.Immutable).
func (joinRows) ImmutableInState() {}

// AppendBinary appends rs's encoding (the engine's codec.Marshaler: one
// call per key's rows, not one per field): the number of rows, then per
// row its encoding (row.Row.AppendBinary), count and matches.
func (rs joinRows) AppendBinary(dst []byte) ([]byte, error) {
	dst = binary.AppendUvarint(dst, uint64(len(rs)))
	for _, e := range rs {
		dst = append(dst, e.Row...)
		dst = binary.AppendVarint(dst, e.Count)
		dst = binary.AppendVarint(dst, e.Assoc)
	}
	return dst, nil
}

// DecodeBinary decodes what AppendBinary appended (codec.Unmarshaler).
// The rows' encodings are checked, and copied out of src in one buffer.
func (rs *joinRows) DecodeBinary(src []byte) (int, error) {
	n, off := binary.Uvarint(src)
	if off <= 0 || n > uint64(len(src)) {
		return 0, fmt.Errorf("join rows: bad count: %w", row.ErrCorrupt)
	}
	out := make(joinRows, n)
	ends := make([][2]int, n)
	for i := range out {
		w, err := row.SkipBinary(src[off:])
		if err != nil {
			return 0, err
		}
		ends[i] = [2]int{off, off + w}
		off += w
		for _, c := range []*int64{&out[i].Count, &out[i].Assoc} {
			v, w := binary.Varint(src[off:])
			if w <= 0 {
				return 0, fmt.Errorf("join rows: bad count: %w", row.ErrCorrupt)
			}
			*c, off = v, off+w
		}
	}
	own := bytes.Clone(src[:off])
	for i, e := range ends {
		out[i].Row = own[e[0]:e[1]:e[1]]
	}
	*rs = out
	return off, nil
}

// find returns the index of the row encoded as enc in rs, or -1. Equal
// values encode alike (row.AppendValue).
func (rs joinRows) find(enc []byte) int {
	for i, e := range rs {
		if bytes.Equal(e.Row, enc) {
			return i
		}
	}
	return -1
}

// with returns a copy of rs with entry i set to e (appended when i is
// len(rs)), or without it when e.Count is 0.
func (rs joinRows) with(i int, e joinEntry) joinRows {
	if e.Count <= 0 {
		out := make(joinRows, 0, len(rs)-1)
		return append(append(out, rs[:i]...), rs[i+1:]...)
	}
	out := make(joinRows, len(rs), len(rs)+1)
	copy(out, rs)
	if i == len(rs) {
		return append(out, e)
	}
	out[i] = e
	return out
}

// joinMatch is a matching row of the other side: its hash, its index in
// its joinRows, the entry, and its values.
type joinMatch struct {
	h uint64
	i int
	e joinEntry
	v []row.Value
}

type regularJoin[K comparable] struct {
	joiner
	left, right joinSide[K]
	enc         []byte      // rowHash's encoding of the input row
	vals        []row.Value // the values of matches' rows, reused by each
	ms          []joinMatch // matches' result, reused by each
	// add adds a copy of the row encoded in enc, matched by assoc rows of
	// the other side, to a row hash's entries (MapState.Compute); made
	// once, so that a call allocates no closure.
	add   func(rs joinRows, _ bool) joinRows
	assoc int64
	// visit's arguments and result, and the func value of j.visit, made
	// once (matches)
	in       []row.Value
	inIsLeft bool
	err      error
	collect  func(uint64, joinRows) bool
}

func (j *regularJoin[K]) Open(sc *weir.StateContext[K]) error {
	j.left = newJoinSide(sc, "left", j.spec.LeftAppendOnly && !j.spec.Kind.leftOuter(), j.spec)
	j.right = newJoinSide(sc, "right", j.spec.RightAppendOnly && !j.spec.Kind.rightOuter(), j.spec)
	j.collect = j.visit
	j.add = func(rs joinRows, _ bool) joinRows {
		i := rs.find(j.enc)
		var e joinEntry
		if i < 0 {
			i = len(rs)
			e.Row = make([]byte, len(j.enc)) // not cleared: copy fills it (makeslicecopy)
			copy(e.Row, j.enc)
		} else {
			e = rs[i]
		}
		e.Count++
		e.Assoc = j.assoc
		return rs.with(i, e)
	}
	return nil
}

func (j *regularJoin[K]) ProcessElement1(ctx *weir.KeyedContext[K, row.Row], in row.Row) error {
	return j.process(ctx, in, true)
}

func (j *regularJoin[K]) ProcessElement2(ctx *weir.KeyedContext[K, row.Row], in row.Row) error {
	return j.process(ctx, in, false)
}

// rowHash hashes a row's values, the same in every process (it is stored
// in state), and leaves the row's encoding as a joinEntry holds it in
// j.enc.
func (j *regularJoin[K]) rowHash(vals []row.Value) uint64 {
	j.enc, _ = row.Row{Op: row.Insert, V: vals}.AppendBinary(j.enc[:0])
	body := j.enc[row.ValuesOffset(len(vals)):]
	if j.spec.rowHash != nil {
		return j.spec.rowHash(body)
	}
	return task.HashBytes(body)
}

// output emits the join of in (of the input side) and other, in the
// left-then-right column order.
func (j *regularJoin[K]) output(ctx *weir.KeyedContext[K, row.Row], op row.Op, in, other []row.Value, inIsLeft bool) {
	if inIsLeft {
		ctx.Emit(j.concat(op, in, other))
	} else {
		ctx.Emit(j.concat(op, other, in))
	}
}

// matches returns the other side's entries that join with in. They and
// their values are valid until the next call.
func (j *regularJoin[K]) matches(in []row.Value, other joinSide[K], inIsLeft bool) ([]joinMatch, error) {
	clear(j.ms) // drop the last call's references
	j.ms, j.vals, j.err = j.ms[:0], j.vals[:0], nil
	j.in, j.inIsLeft = in, inIsLeft
	if other.list != nil {
		l, _ := other.list.Value()
		j.visitList(l)
	} else {
		other.rows.All(j.collect)
	}
	j.in = nil
	return j.ms, j.err
}

// visit is matches' visit of the other side's entries of one row hash:
// it appends those that join with j.in to j.ms, and stops at an error
// (j.err).
func (j *regularJoin[K]) visit(h uint64, rs joinRows) bool {
	for i, e := range rs {
		start := len(j.vals)
		var err error
		if j.vals, err = row.AppendShared(j.vals, e.Row); err != nil {
			j.err = fmt.Errorf("exec: join state: %w", err)
			return false
		}
		if !j.consider(h, i, e, start) {
			return false
		}
	}
	return true
}

// consider appends entry e (entry i of the row hash h), whose values are
// j.vals[start:], to j.ms if it joins with j.in, and drops its values
// otherwise. It reports false at an error of the condition (j.err).
func (j *regularJoin[K]) consider(h uint64, i int, e joinEntry, start int) bool {
	v := j.vals[start:len(j.vals):len(j.vals)]
	var ok bool
	var err error
	if j.inIsLeft {
		ok, err = j.match(j.in, v)
	} else {
		ok, err = j.match(v, j.in)
	}
	if err != nil {
		j.err = err
		return false
	}
	if ok {
		j.ms = append(j.ms, joinMatch{h, i, e, v})
	} else {
		j.vals = j.vals[:start]
	}
	return true
}

// setAssoc stores the matches' new Assoc counts in the other side's
// state: one new joinRows per row hash.
func setAssoc[K comparable](other *weir.MapState[uint64, joinRows, K], ms []joinMatch) {
	for k := 0; k < len(ms); {
		h := ms[k].h
		rs, _ := other.Get(h)
		rs = append(joinRows(nil), rs...)
		for ; k < len(ms) && ms[k].h == h; k++ {
			rs[ms[k].i].Assoc = ms[k].e.Assoc
		}
		other.Put(h, rs)
	}
}

// process is Flink's StreamingJoinOperator.processElement.
func (j *regularJoin[K]) process(ctx *weir.KeyedContext[K, row.Row], in row.Row, inIsLeft bool) error {
	self, other := j.left, j.right
	inOuter, otherOuter := j.spec.Kind.leftOuter(), j.spec.Kind.rightOuter()
	keys := j.spec.LeftKeys
	if !inIsLeft {
		self, other = other, self
		inOuter, otherOuter = otherOuter, inOuter
		keys = j.spec.RightKeys
	}
	accumulate := !in.Op.Retracts()
	if !accumulate && self.list != nil {
		return j.appendOnlyViolation(in, inIsLeft)
	}
	if nullKey(in, keys) {
		if inOuter {
			op := row.Insert
			if !accumulate {
				op = row.Delete
			}
			j.output(ctx, op, in.V, nil, inIsLeft)
		}
		return nil
	}
	matched, err := j.matches(in.V, other, inIsLeft)
	if err != nil {
		return err
	}
	n := int64(0)
	for _, m := range matched {
		n += m.e.Count
	}
	if !accumulate {
		h := j.rowHash(in.V)
		j.retract(self.rows, h, j.enc)
		if n == 0 {
			if inOuter {
				j.output(ctx, row.Delete, in.V, nil, inIsLeft)
			}
			return nil
		}
		op := in.Op // Flink keeps -U of a row of an inner side
		if inOuter {
			op = row.Delete
		}
		for _, m := range matched {
			for range m.e.Count {
				j.output(ctx, op, in.V, m.v, inIsLeft)
			}
		}
		if otherOuter {
			for i := range matched {
				e := &matched[i].e
				if e.Assoc == 1 {
					for range e.Count {
						j.output(ctx, row.Insert, matched[i].v, nil, !inIsLeft)
					}
				}
				e.Assoc--
			}
			setAssoc(other.rows, matched)
		}
		return nil
	}
	if otherOuter {
		for i := range matched {
			e := &matched[i].e
			if e.Assoc == 0 {
				for range e.Count {
					j.output(ctx, row.Delete, matched[i].v, nil, !inIsLeft)
				}
			}
			e.Assoc++
		}
		setAssoc(other.rows, matched)
	}
	if inOuter && n == 0 {
		j.output(ctx, row.Insert, in.V, nil, inIsLeft)
	}
	op := in.Op
	if inOuter || otherOuter {
		op = row.Insert
	}
	for _, m := range matched {
		for range m.e.Count {
			j.output(ctx, op, in.V, m.v, inIsLeft)
		}
	}
	if self.list != nil {
		appendRow(self.list, in.V)
		return nil
	}
	j.assoc = n
	self.rows.Compute(j.rowHash(in.V), j.add)
	return nil
}

// retract removes one copy of the row encoded as enc (hashing to h) from
// a side's state.
func (j *regularJoin[K]) retract(side *weir.MapState[uint64, joinRows, K], h uint64, enc []byte) {
	rs, _ := side.Get(h)
	i := rs.find(enc)
	if i < 0 {
		return
	}
	e := rs[i]
	e.Count--
	if rs = rs.with(i, e); len(rs) == 0 {
		side.Delete(h)
		return
	}
	side.Put(h, rs)
}
