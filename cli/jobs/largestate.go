package jobs

import (
	"encoding/binary"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connectors/generator"
)

// LargeStateRow is one row of largestate's output: a key whose value was
// read back as it was written.
type LargeStateRow struct {
	Key   int64 `json:"key"`
	Bytes int   `json:"bytes"`
}

func init() {
	register(cli.Job{
		Name:  "largestate",
		Short: "Keep a value per key, as much keyed state as asked for (for the pebble state backend)",
		Long: `Each of --keys keys receives two records. The first stores a value of
--value-bytes pseudo-random (incompressible) bytes derived from the key in
keyed value state; the second reads it back, checks it, and writes one row
{"key": ..., "bytes": ...}. The state grows to keys x value-bytes and stays
until the end: with --state-backend pebble it may be far larger than the
process's memory. A value read back wrong fails the job.`,
		Flags: func(fs *pflag.FlagSet) cli.Builder {
			var keys int64
			var size int
			var seed uint64
			var rate float64
			fs.Int64Var(&keys, "keys", 1_000_000, "number of keys, each holding one value")
			fs.IntVar(&size, "value-bytes", 100, "bytes of each key's value")
			fs.Uint64Var(&seed, "seed", 1, "seed of the values")
			fs.Float64Var(&rate, "rate", 0, "throttle generation to this many records per second of wall-clock time (0: as fast as possible)")
			cli.MayChangeOnRestore(fs, "rate")
			return func(p *weir.Pipeline, cfg cli.JobConfig) error {
				if keys <= 0 || size < 8 {
					return fmt.Errorf("largestate: --keys must be positive and --value-bytes at least 8, got %d and %d", keys, size)
				}
				LargeStatePipeline(p, keys, size, seed, rate, cfg)
				return nil
			}
		},
	})
}

// LargeStatePipeline adds largestate's operators: records 0 .. 2*keys-1,
// record i for key i mod keys, at rate records per second (0: as fast as
// possible).
func LargeStatePipeline(p *weir.Pipeline, keys int64, size int, seed uint64, rate float64, cfg cli.JobConfig) {
	var opts []generator.Option
	if rate > 0 {
		opts = append(opts, generator.WithRate(rate))
	}
	in := weir.FromSource(p, "records", generator.New(2*keys, func(i int64) int64 { return i % keys }, opts...))
	rows := weir.Process(weir.KeyBy(in, func(k int64) int64 { return k }), func() weir.KeyedProcessFunction[int64, int64, LargeStateRow] {
		return &keeper{size: size, seed: seed}
	}, weir.Name("keep"))
	weir.To(rows, "output", cli.OutputSink[LargeStateRow](cfg))
}

// keeper stores each key's value on its first record and checks it on
// its second.
type keeper struct {
	v    *weir.ValueState[string, int64]
	size int
	seed uint64
	buf  []byte
}

func (k *keeper) Open(sc *weir.StateContext[int64]) error {
	k.v = weir.NewValueState[string](sc, "value")
	return nil
}

// value returns key's value: size bytes of SplitMix64 output.
func (k *keeper) value(key int64) string {
	k.buf = k.buf[:0]
	for i := uint64(0); len(k.buf) < k.size; i++ {
		k.buf = binary.LittleEndian.AppendUint64(k.buf, generator.Mix(k.seed^uint64(key), i))
	}
	return string(k.buf[:k.size])
}

func (k *keeper) ProcessElement(ctx *weir.KeyedContext[int64, LargeStateRow], key int64) error {
	v, ok := k.v.Value()
	want := k.value(key)
	if !ok {
		k.v.Update(want)
		return nil
	}
	if v != want {
		return fmt.Errorf("largestate: key %d read back %d bytes that differ from the %d it stored", key, len(v), len(want))
	}
	ctx.Emit(LargeStateRow{Key: key, Bytes: len(v)})
	return nil
}
