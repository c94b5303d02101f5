package standbylog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/weir-stream/weir/internal/exchange"
)

// ErrLost is returned by Ship when the log no longer holds what the
// standby needs: it was dropped for its size, or restarted with its
// subtask.
var ErrLost = errors.New("the input log was dropped or restarted")

// ErrBadEntry is returned by Receive for an element that does not decode
// as a log entry.
var ErrBadEntry = errors.New("bad input log entry")

// Kinds of entries on the wire only, beyond those of a Log.
const (
	wireMark Kind = 16 + iota // the primary took a checkpoint's snapshot here
	wireLost                  // the log ends: the standby must stop
)

// Ship prepares to send the log from checkpoint from's mark on: from now
// on the log keeps what the returned function has not sent. That
// function sends the log through send, one element per entry in order,
// each mark before the entries that follow it, until ctx ends or send
// fails. Both fail with ErrLost when the log does not reach back to from,
// or is dropped or restarted; the function then sends a last element
// that tells the standby to stop.
func (l *Log) Ship(from int64) (func(ctx context.Context, send func(exchange.Element) error) error, error) {
	at, ok := l.StartReading(from)
	if !ok {
		return nil, fmt.Errorf("from checkpoint %d: %w", from, ErrLost)
	}
	return func(ctx context.Context, send func(exchange.Element) error) error {
		defer l.StopReading()
		ship := func(en Entry) error { return send(wireElement(en)) }
		marked := from
		for {
			for m, ok := l.markAfter(marked, at); ok; m, ok = l.markAfter(marked, at) {
				marked = m.id
				if err := ship(Entry{Kind: wireMark, Checkpoint: m.id}); err != nil {
					return err
				}
			}
			en, ok, _, lost := l.Next(at)
			if lost {
				_ = ship(Entry{Kind: wireLost})
				return ErrLost
			}
			if !ok {
				select {
				case <-l.ready:
				case <-ctx.Done():
					return ctx.Err()
				}
				continue
			}
			at++
			if err := ship(en); err != nil {
				return err
			}
		}
	}, nil
}

// markAfter returns the first mark of a checkpoint after id at or before
// absolute entry index at.
func (l *Log) markAfter(id, at int64) (mark, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.marks {
		if m.id > id && m.at <= at {
			return m, true
		}
	}
	return mark{}, false
}

// LostElement returns the element that stops a standby in another
// process: what Ship sends last when the log is lost, for a shipper that
// could not start (Ship failed) to send instead.
func LostElement() exchange.Element { return wireElement(Entry{Kind: wireLost}) }

// wireElement is log entry en as an element on the wire.
func wireElement(en Entry) exchange.Element {
	b := exchange.GetBuffer()
	b.B, b.N = appendEntry(b.B[:0], en), 1
	return exchange.Element{Kind: exchange.Data, Buf: b}
}

// Receive adds what arrived from a primary's Ship, the payload of one of
// its elements, to this log, and reports whether more may follow: not
// after the log's end, nor once a promoted standby logs its own input
// here (LogOwnInput). Marks become the log's marks, so that a completed
// checkpoint trims it. A payload that does not decode ends the log as
// its end would, and Receive returns ErrBadEntry.
func (l *Log) Receive(payload []byte) (more bool, err error) {
	en, err := decodeEntry(payload)
	if err != nil {
		en.Kind = wireLost
	}
	return l.shipped(en), err
}

// shipped adds an entry that arrived from the primary, and reports
// whether more may follow.
func (l *Log) shipped(en Entry) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.own:
		return false
	case en.Kind == wireMark:
		l.markLocked(en.Checkpoint)
	case en.Kind == wireLost:
		l.dropLocked()
		l.Signal()
		return false
	default:
		l.addLocked(en, false)
	}
	return true
}

// The marks of a barrier in a wire element.
const (
	markUnaligned = 1 << 0
	markMustAlign = 1 << 1
)

// appendEntry encodes en as the payload of a wire element.
func appendEntry(b []byte, en Entry) []byte {
	b = append(b, byte(en.Kind))
	b = binary.AppendUvarint(b, uint64(en.Ch))
	b = binary.AppendUvarint(b, uint64(en.Skip))
	b = binary.AppendUvarint(b, uint64(en.Limit))
	b = binary.AppendVarint(b, en.Checkpoint)
	e := en.E
	var marks byte
	if e.Unaligned {
		marks |= markUnaligned
	}
	if e.MustAlign {
		marks |= markMustAlign
	}
	b = append(b, byte(e.Kind), marks)
	b = binary.AppendVarint(b, e.Time)
	b = binary.AppendVarint(b, e.Checkpoint)
	b = binary.AppendVarint(b, e.Seq)
	if e.Kind == exchange.Data && e.Buf != nil && en.Kind == Element {
		b = binary.AppendUvarint(b, uint64(e.Buf.N))
		b = append(b, e.Buf.Bytes()...)
	} else {
		b = binary.AppendUvarint(b, 0)
	}
	return b
}

// decodeEntry decodes a wire element's payload. A data batch gets a
// buffer of its own.
func decodeEntry(b []byte) (en Entry, err error) {
	if len(b) < 1 {
		return en, ErrBadEntry
	}
	en.Kind = Kind(b[0])
	b = b[1:]
	var u [3]uint64
	for i := range u {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return en, ErrBadEntry
		}
		u[i], b = v, b[n:]
	}
	en.Ch, en.Skip, en.Limit = int(u[0]), int(u[1]), int(u[2])
	var n int
	if en.Checkpoint, n = binary.Varint(b); n <= 0 || len(b) < n+2 {
		return en, ErrBadEntry
	}
	b = b[n:]
	en.E.Kind, en.E.Unaligned, en.E.MustAlign = exchange.Kind(b[0]), b[1]&markUnaligned != 0, b[1]&markMustAlign != 0
	b = b[2:]
	for _, p := range []*int64{&en.E.Time, &en.E.Checkpoint, &en.E.Seq} {
		if *p, n = binary.Varint(b); n <= 0 {
			return en, ErrBadEntry
		}
		b = b[n:]
	}
	records, n := binary.Uvarint(b)
	if n <= 0 {
		return en, ErrBadEntry
	}
	b = b[n:]
	if en.Kind == Element && en.E.Kind == exchange.Data {
		en.E.Buf = &exchange.Buffer{B: append([]byte(nil), b...), N: int(records)}
	}
	return en, nil
}
