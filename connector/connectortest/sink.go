package connectortest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/weir-stream/weir/connector"
)

// sinkBatchSizes are the batch sizes a subtask writes with, in turn.
var sinkBatchSizes = []int{1, 7, 2, 31, 64, 3}

// Split distributes records over parallelism subtasks the way the sink
// checks do: record i goes to subtask i % parallelism.
func Split[T any](records []T, parallelism int) [][]T {
	out := make([][]T, parallelism)
	for i, r := range records {
		out[i%parallelism] = append(out[i%parallelism], r)
	}
	return out
}

// WriteAll opens parallelism writers of sink and, concurrently, writes to
// each its share of records (see Split) in batches of varying sizes, with a
// Flush after the second batch and at the end, then closes it. After every
// Write it overwrites the batch with zero values and reuses the slice for
// the next batch, as the engine may, so a writer that retains the batch
// writes wrong records. It returns what each subtask was given.
func WriteAll[T any](ctx context.Context, sink connector.Sink[T], records []T, parallelism int) ([][]T, error) {
	shares := Split(records, parallelism)
	errs := make([]error, parallelism)
	var wg sync.WaitGroup
	for s := range parallelism {
		wg.Go(func() {
			defer recoverTo(&errs[s], s, parallelism)
			if err := writeShare(ctx, sink, shares[s], parallelism, s); err != nil {
				errs[s] = subtaskErr(s, parallelism, "%v", err)
			}
		})
	}
	wg.Wait()
	return shares, errors.Join(errs...)
}

func writeShare[T any](ctx context.Context, sink connector.Sink[T], share []T, n, s int) (err error) {
	w, err := sink.Open(ctx, info(n, s))
	if err != nil {
		return fmt.Errorf("Open: %w", err)
	}
	if w == nil {
		return fmt.Errorf("Open returned a nil Writer")
	}
	defer func() {
		if cerr := w.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("Close: %w", cerr)
		}
	}()
	batch := make([]T, 0, 64)
	var zero T
	for i, b := 0, 0; i < len(share); b++ {
		size := min(sinkBatchSizes[b%len(sinkBatchSizes)], len(share)-i)
		batch = append(batch[:0], share[i:i+size]...)
		if err := w.Write(ctx, batch); err != nil {
			return fmt.Errorf("Write of batch %d (records #%d-#%d): %w", b, i, i+size-1, err)
		}
		for j := range batch {
			batch[j] = zero
		}
		i += size
		if b == 1 {
			if err := w.Flush(ctx); err != nil {
				return fmt.Errorf("Flush after record #%d: %w", i-1, err)
			}
		}
	}
	if err := w.Flush(ctx); err != nil {
		return fmt.Errorf("final Flush: %w", err)
	}
	return nil
}

// CheckSink writes records through parallelism subtasks of sink with
// WriteAll and checks what the sink made visible:
//   - readBack must return exactly records as a multiset (a writer that
//     retained a batch slice shows up as zero values here);
//   - if readBackBySubtask is not nil, it must return for each subtask
//     exactly the records that subtask was given, in order.
//
// Either read-back function may be nil (but not both).
func CheckSink[T comparable](ctx context.Context, sink connector.Sink[T], records []T, parallelism int,
	readBack func() ([]T, error), readBackBySubtask func() ([][]T, error)) error {
	shares, err := WriteAll(ctx, sink, records, parallelism)
	if err != nil {
		return err
	}
	if readBack == nil && readBackBySubtask == nil {
		return errors.New("connectortest: CheckSink needs readBack or readBackBySubtask")
	}
	if readBack != nil {
		got, err := readBack()
		if err != nil {
			return fmt.Errorf("reading back: %w", err)
		}
		if d := DiffMultiset([][]T{got}, records); d != "" {
			return fmt.Errorf("parallelism %d: sink output differs from the records written: %s", parallelism, d)
		}
	}
	if readBackBySubtask != nil {
		got, err := readBackBySubtask()
		if err != nil {
			return fmt.Errorf("reading back by subtask: %w", err)
		}
		for s := range max(len(got), parallelism) {
			var g, w []T
			if s < len(got) {
				g = got[s]
			}
			if s < parallelism {
				w = shares[s]
			}
			if d := DiffSequence(g, w); d != "" {
				return subtaskErr(s, parallelism, "sink output of this subtask %s", d)
			}
		}
	}
	return nil
}

// CheckSinkEmpty opens parallelism writers, flushes and closes them without
// writing, and checks that readBack then returns no records.
func CheckSinkEmpty[T any](ctx context.Context, sink connector.Sink[T], parallelism int, readBack func() ([]T, error)) error {
	if _, err := WriteAll(ctx, sink, nil, parallelism); err != nil {
		return err
	}
	got, err := readBack()
	if err != nil {
		return fmt.Errorf("reading back: %w", err)
	}
	if len(got) > 0 {
		return fmt.Errorf("sink shows %d records after writing none, first %s", len(got), show(got[0]))
	}
	return nil
}
