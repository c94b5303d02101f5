// Package determinant is the log of the order in which a subtask that
// merges several input channels consumed them.
//
// Such a subtask consumes its channels in the order their records happen
// to arrive. To regenerate its output record for record after a restart,
// it must consume them in the same order again. Under fine-grained
// failover every such subtask whose chain is deterministic logs that
// order (its determinants, as Clonos calls them): per channel, how far it
// had consumed when it turned to another. The log outlives a failed
// incarnation of the subtask; it is trimmed when a checkpoint completes.
// A restarted incarnation follows the log from its restored checkpoint
// on (Since), splitting batches where the order switched channels
// mid-batch, before it polls its gate freely.
package determinant

// A Turn says: consume channel Ch until UpTo records were received on it.
type Turn struct {
	Ch   int
	UpTo int64
}

// mark is where the snapshot of checkpoint id was taken in the log.
type mark struct {
	id int64
	at int
}

// A Log is one subtask's consumption order since its latest completed
// checkpoint. Only the subtask's running incarnation touches it; the
// next one takes it over after the previous stopped. The zero Log is
// empty and reaches back to the start.
type Log struct {
	base  int64 // the checkpoint whose snapshot turns[0] follows (0: the start; < 0: none)
	turns []Turn
	marks []mark
}

// Record notes that channel ch has been consumed up to upTo records. It
// extends the last turn only when no snapshot was marked after it: a
// restart from that snapshot must find the turn that follows it.
func (d *Log) Record(ch int, upTo int64) {
	n := len(d.turns)
	marked := len(d.marks) > 0 && d.marks[len(d.marks)-1].at == n
	if n > 0 && d.turns[n-1].Ch == ch && !marked {
		d.turns[n-1].UpTo = upTo
		return
	}
	d.turns = append(d.turns, Turn{ch, upTo})
}

// Mark notes where checkpoint id's snapshot was taken.
func (d *Log) Mark(id int64) {
	d.marks = append(d.marks, mark{id, len(d.turns)})
}

// Trim drops what came before checkpoint id's snapshot, now that id
// completed. An id never marked trims nothing.
func (d *Log) Trim(id int64) {
	for i, m := range d.marks {
		if m.id != id {
			continue
		}
		d.turns = append(d.turns[:0], d.turns[m.at:]...)
		rest := d.marks[i+1:]
		for j := range rest {
			rest[j].at -= m.at
		}
		d.marks = append(d.marks[:0], rest...)
		d.base = id
		return
	}
}

// Forget drops the log's claim to reach back to its base checkpoint (the
// order consumed since is not all known: it was logged in a lost process,
// by a lost primary or a lost incarnation): Since of the base fails. Marks
// already taken stay, and a Trim at one of them sets a new base.
func (d *Log) Forget() { d.base = -1 }

// Since returns the order logged after checkpoint id's snapshot (0: from
// the start) and resets the log to start there, for the incarnation that
// follows it. ok is false when the log does not reach back to id.
func (d *Log) Since(id int64) (order []Turn, ok bool) {
	at := -1
	if id == d.base {
		at = 0
	}
	for _, m := range d.marks {
		if m.id == id {
			at = m.at
		}
	}
	if at < 0 {
		return nil, false
	}
	order = append([]Turn(nil), d.turns[at:]...)
	d.turns, d.marks, d.base = d.turns[:0], d.marks[:0], id
	return order, true
}
