package nats

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/weir-stream/weir/connector"
)

// This file moves a source's positions to another parallelism
// (connector.Rescaler).
//
// A subtask reads its partitions (filter subjects) through one consumer
// in stream order, so its plain position, the next stream sequence, says
// where each of its partitions goes on. Subtask i of n holds partitions
// k ≡ i (mod n), so the old positions together give the start of every
// partition k as a function of k mod n, without knowing how many
// partitions there are (they may be the stream's subjects, which only
// the server knows). A new subtask whose partitions start at different
// sequences gets a table of them,
//
//	0x00, uvarint(L), then L uvarints: partition k starts at entry k mod L
//
// which no plain position is (a plain one is one uvarint, never 0). Its
// consumer starts at the earliest of its partitions' starts and it drops
// the messages of a partition before that partition's start, until its
// consumer passed every start and its position is plain again.

// maxPeriod bounds a table: the least common multiple of the
// parallelisms a job was rescaled between while its partitions stood at
// different places.
const maxPeriod = 1 << 12

// starts is a table of partition starts: partition k at t[k mod len(t)].
type starts []uint64

func (t starts) at(k int) uint64 { return t[k%len(t)] }

// decodePosition returns the next stream sequence of a plain position
// (1 for nil), or the table of a rescaled one.
func decodePosition(stream string, pos connector.Position) (uint64, starts, error) {
	bad := fmt.Errorf("nats: stream %s: corrupt position %x", stream, []byte(pos))
	if pos == nil {
		return 1, nil, nil
	}
	if len(pos) > 1 && pos[0] == 0 {
		data := pos[1:]
		l, n := binary.Uvarint(data)
		if n <= 0 || l == 0 || l > maxPeriod {
			return 0, nil, bad
		}
		data = data[n:]
		t := make(starts, l)
		for i := range t {
			v, n := binary.Uvarint(data)
			if n <= 0 || v == 0 {
				return 0, nil, bad
			}
			t[i], data = v, data[n:]
		}
		if len(data) > 0 {
			return 0, nil, bad
		}
		return 0, t, nil
	}
	v, n := binary.Uvarint(pos)
	if n <= 0 || n != len(pos) || v == 0 {
		return 0, nil, bad
	}
	return v, nil, nil
}

func encodeStarts(t starts) connector.Position {
	out := binary.AppendUvarint([]byte{0}, uint64(len(t)))
	for _, v := range t {
		out = binary.AppendUvarint(out, v)
	}
	return out
}

// cursor is where a reader stands: the next stream sequence its
// consumer delivers, and, after a rescale, where each of its partitions
// starts.
type cursor struct {
	next uint64
	// table is the rescaled position the reader opened at; starts holds
	// its entry for each of the reader's partitions and maxStart the
	// highest. Both are nil once next passed every start.
	table    starts
	starts   []uint64
	maxStart uint64
}

// openCursor returns the cursor of a reader at pos (decoded by
// decodePosition: next, or table) whose partitions are parts (their
// indices in the partition list).
func openCursor(next uint64, table starts, parts []int) cursor {
	if table == nil {
		return cursor{next: next}
	}
	c := cursor{table: table, starts: make([]uint64, len(parts))}
	for f, k := range parts {
		c.starts[f] = table.at(k)
		if f == 0 || c.starts[f] < c.next {
			c.next = c.starts[f]
		}
		c.maxStart = max(c.maxStart, c.starts[f])
	}
	if len(parts) == 0 {
		c.next = 1 // reads nothing; its position speaks for no partition
	}
	c.level()
	return c
}

// level drops the starts once the consumer passed all of them.
func (c *cursor) level() {
	if c.starts != nil && c.next >= c.maxStart || len(c.starts) == 0 {
		c.table, c.starts = nil, nil
	}
}

// consume records that the consumer delivered stream sequence seq of
// partition f (the reader's f-th; -1 if unknown) and reports whether the
// message is the reader's to return: not before its partition's start.
func (c *cursor) consume(f int, seq uint64) bool {
	c.next = seq + 1
	mine := c.starts == nil || f < 0 || seq >= c.starts[f]
	c.level()
	return mine
}

// position is the cursor's position: plain once every partition goes on
// at next, else the table with every start moved up to next.
func (c *cursor) position() connector.Position {
	if c.starts == nil {
		return binary.AppendUvarint(nil, c.next)
	}
	t := make(starts, len(c.table))
	for i, v := range c.table {
		t[i] = max(v, c.next)
	}
	return encodeStarts(t)
}

// Rescale gives each new subtask the starts of the partitions it will
// hold (connector.Rescaler).
func (s *Source[T]) Rescale(old []connector.Position, n int) ([]connector.Position, error) {
	if n < 1 || len(old) < 1 {
		return nil, fmt.Errorf("nats: cannot rescale %d positions to parallelism %d", len(old), n)
	}
	nexts := make([]uint64, len(old))
	tables := make([]starts, len(old))
	period := len(old)
	for i, pos := range old {
		var err error
		if nexts[i], tables[i], err = decodePosition(s.opts.Stream, pos); err != nil {
			return nil, err
		}
		if tables[i] != nil {
			period = lcm(period, len(tables[i]))
		}
		if period > maxPeriod {
			return nil, fmt.Errorf("nats: stream %s: the partitions' positions, taken across parallelisms %d and more, are too finely split to move again (over %d); restore at parallelism %d", s.opts.Stream, len(old), maxPeriod, len(old))
		}
	}
	// t[k mod period] is where partition k goes on: at its old
	// subtask's (k mod len(old)) position.
	t := make(starts, period)
	for k := range t {
		i := k % len(old)
		if tables[i] != nil {
			t[k] = tables[i].at(k)
		} else {
			t[k] = nexts[i]
		}
	}
	t = shortest(t)
	out := make([]connector.Position, n)
	for j := range out {
		// Subtask j holds partitions k ≡ j (mod n); their starts repeat
		// with period lcm(len(t), n).
		first, level := t.at(j), true
		for k := j; k < lcm(len(t), n); k += n {
			level = level && t.at(k) == first
		}
		if level {
			out[j] = binary.AppendUvarint(nil, first)
		} else {
			out[j] = encodeStarts(t)
		}
	}
	return out, nil
}

// shortest returns t cut to its shortest period.
func shortest(t starts) starts {
	for p := 1; p < len(t); p++ {
		if len(t)%p != 0 {
			continue
		}
		same := true
		for k := p; k < len(t) && same; k++ {
			same = t[k] == t[k-p]
		}
		if same {
			return t[:p]
		}
	}
	return t
}

func lcm(a, b int) int {
	g, h := a, b
	for h != 0 {
		g, h = h, g%h
	}
	return a / g * b
}

// subjectMatches reports whether subject matches filter, a subject that
// may hold wildcards: "*" for one token, a final ">" for one or more.
func subjectMatches(filter, subject string) bool {
	for {
		ft, frest, fmore := strings.Cut(filter, ".")
		st, srest, smore := strings.Cut(subject, ".")
		switch {
		case ft == ">" && !fmore:
			return st != ""
		case ft != "*" && ft != st:
			return false
		case !fmore || !smore:
			return fmore == smore
		}
		filter, subject = frest, srest
	}
}
