package kafka

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/weir-stream/weir/connector"
)

// Rescaled, every partition's offset goes to the one new subtask that
// owns it.
func TestRescaleGivesEachPartitionsOffsetToItsNewOwner(t *testing.T) {
	src := &source[string]{}
	all := map[tp]int64{}
	old := make([]connector.Position, 2)
	for i := range old {
		offs := map[tp]int64{}
		for _, topic := range []string{"a", "b"} {
			for p := range int32(5) {
				if owner(topic, p, 2) == i {
					offs[tp{topic, p}] = int64(100*i) + int64(p)
					all[tp{topic, p}] = offs[tp{topic, p}]
				}
			}
		}
		old[i] = encodePosition(offs)
	}
	for _, n := range []int{1, 3, 8} {
		pos, err := src.Rescale(old, n)
		if err != nil {
			t.Fatal(err)
		}
		got := map[tp]int64{}
		for j, p := range pos {
			offs, err := decodePosition(p)
			if err != nil {
				t.Fatal(err)
			}
			for part, off := range offs {
				if owner(part.topic, part.partition, n) != j {
					t.Errorf("n=%d: subtask %d got %v, which it does not own", n, j, part)
				}
				got[part] = off
			}
		}
		if !maps.Equal(got, all) {
			t.Errorf("n=%d: offsets %v, want %v", n, got, all)
		}
	}
	if _, err := src.Rescale([]connector.Position{{9}}, 2); err == nil {
		t.Error("a corrupt position rescaled")
	}
}

// A job restored at a lower parallelism hands the sink subtask that
// remains the restored transactions of the old subtasks that are gone
// too. It commits them and aborts what each old subtask left open after
// the checkpoint, counting from that subtask's own next transaction: an
// open transaction would hold back the last stable offset of the
// partitions it wrote to until it timed out, hiding every later record
// from read_committed consumers.
func TestRecoverAtALowerParallelismAbortsWhatEveryOldSubtaskLeftOpen(t *testing.T) {
	topic := newTopic(t, 2)
	s := stringSink(t, topic, ExactlyOnce)
	ctx := t.Context()
	openAt := func(subtask, parallelism int) *txnWriter[string] {
		w, err := s.Open(ctx, connector.SubtaskInfo{Operator: "sink", Subtask: subtask, Parallelism: parallelism})
		if err != nil {
			t.Fatal(err)
		}
		return w.(*txnWriter[string])
	}

	// At parallelism 2, subtask 0 writes before checkpoint 1 only and
	// subtask 1 before each of checkpoints 1 to 3, so their transaction
	// counters differ; checkpoints 1 and 2 commit. After checkpoint 3
	// both write on and crash, leaving a transaction open each.
	var restored [][]byte
	var want []string
	for sub, writes := range []int{1, 3} {
		w := openAt(sub, 2)
		if err := w.Recover(ctx, 0, nil); err != nil {
			t.Fatal(err)
		}
		for id := range int64(3) {
			if id < int64(writes) {
				v := fmt.Sprintf("%d-%d", sub, id)
				mustWrite(t, w, v)
				want = append(want, v)
			}
			txn, err := w.PreCommit(ctx, id+1)
			if err != nil {
				t.Fatal(err)
			}
			if id < 2 {
				if err := w.Commit(ctx, txn); err != nil {
					t.Fatal(err)
				}
			} else {
				restored = append(restored, txn)
			}
		}
		mustWrite(t, w, fmt.Sprintf("%d-after", sub))
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		crash(w)
	}

	// Restored at parallelism 1 from checkpoint 3.
	w := openAt(0, 1)
	if err := w.Recover(ctx, 3, restored); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	settled(t, topic)
	got := decodeAll(t, values(committed(t, topic)))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("after the restore at parallelism 1 a read_committed consumer sees %q, want %q", got, want)
	}
}

// A transaction's description names the subtask whose ids it counts;
// one written before it did (version 1) still decodes, as this
// subtask's.
func TestATransactionDescriptionNamesItsSubtask(t *testing.T) {
	d := txnDesc{id: "p-2-7", pid: 42, epoch: 3, next: 8, subtask: 2}
	if got, err := decodeTxn(d.encode()); err != nil || got != d {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, d)
	}
	empty := txnDesc{next: 5, subtask: 1}
	if got, err := decodeTxn(empty.encode()); err != nil || got != empty {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, empty)
	}
	v1 := []byte{1, 8, 5, 'p', '-', '0', '-', '7', 84, 6} // next 8, id "p-0-7", pid 42, epoch 3
	want := txnDesc{id: "p-0-7", pid: 42, epoch: 3, next: 8, subtask: -1}
	if got, err := decodeTxn(v1); err != nil || got != want {
		t.Fatalf("version 1: decoded %+v, %v; want %+v", got, err, want)
	}
	if _, err := decodeTxn([]byte{3, 8}); err == nil {
		t.Error("an unknown version decoded")
	}
}
