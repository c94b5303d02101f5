package state

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// This file hands state over in memory: at a live rescale in one process
// the instance of an operator in a new subtask takes the tables and timers
// of the instances of the retired subtasks whose key groups overlap its
// own, as they were at the rescale's checkpoint, without encoding and
// decoding them. A table's key groups pass by reference and stay frozen,
// shared copy-on-write with the retired instance's snapshot of that
// checkpoint, which is still being encoded; unsharded tables and timers
// are copied.

// ErrNoHandOver means a backend cannot take over state in memory: the
// pebble backend's state lies in a store per instance.
var ErrNoHandOver = errors.New("state: the pebble state backend cannot hand its state over in memory")

// Adopt makes b, a new instance that has registered nothing yet, take
// over the state of old: instances of the same operator whose subtasks
// retired at a live rescale after their snapshot and no longer touch
// them. Each table and timer set b registers from now on starts with the
// entries of b's key groups that the old instances held under its name;
// what an old instance had restored and never registered is restored
// from as if b had restored it. State of old instances that b never
// registers is carried into b's snapshots, limited to b's key groups.
//
// Values may be shared with the old instances' last snapshots, so b
// copies them on write as after a snapshot of its own.
func (b *Backend) Adopt(old ...*Backend) error {
	if b.lsm != nil {
		return ErrNoHandOver
	}
	for _, o := range old {
		if o.lsm != nil {
			return ErrNoHandOver
		}
	}
	if len(b.parts) > 0 {
		return errors.New("state: a backend adopts state before it registers any")
	}
	if b.restored == nil {
		b.restored = map[string][]chunk{}
	}
	for _, o := range old {
		if o.kgEnd <= b.kgStart || b.kgEnd <= o.kgStart {
			continue // none of b's key groups
		}
		b.adopted = append(b.adopted, o)
		o.flatten.Do(o.flattenAdopted)
		for _, name := range slices.Sorted(maps.Keys(o.restored)) {
			cs := o.restored[name]
			if strings.HasPrefix(name, schemaPrefix) {
				if _, ok := b.restored[name]; !ok {
					b.restored[name] = cs
				}
				continue
			}
			for _, c := range cs {
				if s, e := o.owns(c); s < e {
					c.start, c.end = s, e
					b.restored[name] = append(b.restored[name], c)
				}
			}
		}
	}
	b.epoch = max(b.epoch, 1)
	return nil
}

// adoptedPart is a part of an adopted instance.
type adoptedPart struct {
	p    part
	from *Backend
}

// takeAdopted returns the parts named name of the adopted instances, for
// its registration to take.
func (b *Backend) takeAdopted(name string) []adoptedPart {
	if len(b.adopted) == 0 {
		return nil
	}
	var out []adoptedPart
	for _, o := range b.adopted {
		if p, ok := o.parts[name]; ok {
			out = append(out, adoptedPart{p: p, from: o})
		}
	}
	return out
}

// adopt fills a table just registered with the entries of its key groups
// in the adopted instances' tables: a sharded table takes their maps, an
// unsharded one copies their entries through its codecs.
func (t *Table[K, V]) adopt(parts []adoptedPart) error {
	for _, ap := range parts {
		o, ok := ap.p.(*Table[K, V])
		if !ok {
			return fmt.Errorf("state %q: the retired instance holds it with other types", t.name)
		}
		if !t.sharded {
			if err := t.restore(o.encode(nil, o.shards), t.key, t.value, 0, all, false); err != nil {
				return fmt.Errorf("state %q: %w", t.name, err)
			}
			continue
		}
		from := ap.from
		for kg := max(t.b.kgStart, from.kgStart); kg < min(t.b.kgEnd, from.kgEnd); kg++ {
			s := kg - t.b.kgStart
			t.shards[s] = o.shards[kg-from.kgStart]
			t.frozen[s] = true
			t.owned[s] = nil
		}
		// The values stay shared with the retired instance, which others
		// may still encode: they are copied before their first change
		// after every snapshot, never released.
		t.held, t.adopted = true, true
	}
	return nil
}

// adoptTimers adds the timers of the adopted instances' timer sets named
// name whose keys lie in b's key groups (all of them without keyGroup).
func adoptTimers[K comparable](b *Backend, t *timerPart[K], name string, keyGroup func(K) int) error {
	for _, ap := range b.takeAdopted(name) {
		o, ok := ap.p.(*timerPart[K])
		if !ok {
			return fmt.Errorf("timers %q: the retired instance holds them with other types", name)
		}
		o.each(func(at int64, k K) {
			if keyGroup != nil {
				if kg := keyGroup(k); kg < b.kgStart || kg >= b.kgEnd {
					return
				}
			}
			t.Register(at, k)
		})
	}
	return nil
}

// flattenAdopted turns the parts of b's adopted instances that b never
// registered into restored sections of b, so that an instance adopting b
// in turn (a second live rescale) finds them; b no longer changes.
func (b *Backend) flattenAdopted() {
	for _, enc := range b.carriedAdopted() {
		for _, c := range enc() {
			if strings.HasPrefix(c.name, schemaPrefix) {
				if _, ok := b.restored[c.name]; !ok {
					b.restored[c.name] = []chunk{{data: c.body, start: 0, end: all}}
				}
				continue
			}
			ch, err := readCarried(c.body)
			if err != nil {
				panic(fmt.Sprintf("state: a carried section written here does not read back: %v", err))
			}
			name := strings.TrimPrefix(c.name, carriedPrefix)
			b.restored[name] = append(b.restored[name], ch)
		}
	}
	b.adopted = nil
}

// carriedAdopted returns, per part of an adopted instance that b has not
// registered, the function that encodes the sections b's snapshot
// carries of it: its entries of the key groups it and b share, and its
// schema. The parts are read, not frozen: they no longer change.
func (b *Backend) carriedAdopted() []func() []carriedSection {
	var out []func() []carriedSection
	schemas := map[string]bool{}
	for _, o := range b.adopted {
		for _, name := range o.order {
			if _, ok := b.parts[name]; ok {
				continue
			}
			p := o.parts[name]
			enc := p.view()
			var schema []byte
			if sp, ok := p.(schemaPart); ok && !schemas[name] {
				schema, schemas[name] = sp.schema(), true
			}
			start, end := max(o.kgStart, b.kgStart), min(o.kgEnd, b.kgEnd)
			out = append(out, func() []carriedSection {
				body := appendRange(nil, start, end)
				cs := []carriedSection{{name: carriedPrefix + name, body: enc(body)}}
				if len(schema) > 0 {
					cs = append(cs, carriedSection{name: schemaPrefix + name, body: schema})
				}
				return cs
			})
		}
	}
	return out
}
