package queries

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/weir-stream/weir/nexmark"
)

// Flags are the event-stream flags of the nexmark job and commands.
type Flags struct {
	Events     int64
	TPS        int
	Generators int
	BaseTime   int64
}

// Define declares the flags on fs.
func (f *Flags) Define(fs *pflag.FlagSet) {
	d := nexmark.DefaultConfig()
	fs.Int64Var(&f.Events, "events", 1_000_000, "number of events to generate")
	fs.IntVar(&f.TPS, "tps", d.FirstEventRate, "event-time density: events per second of event time")
	fs.IntVar(&f.Generators, "generators", d.NumEventGenerators, "number of generators the event space is split into, as Beam's generator splits it (the events do not depend on parallelism)")
	fs.Int64Var(&f.BaseTime, "base-time", d.BaseTime, "event time of the first event, epoch milliseconds")
}

// Config returns the generator configuration the flags describe.
func (f *Flags) Config() (nexmark.Config, error) {
	c := nexmark.DefaultConfig()
	if f.Events < 1 {
		return c, fmt.Errorf("nexmark: --events must be at least 1, got %d", f.Events)
	}
	if f.TPS < 1 {
		return c, fmt.Errorf("nexmark: --tps must be at least 1, got %d", f.TPS)
	}
	if f.Generators < 1 {
		return c, fmt.Errorf("nexmark: --generators must be at least 1, got %d", f.Generators)
	}
	c.NumEvents = f.Events
	c.FirstEventRate, c.NextEventRate = f.TPS, f.TPS
	c.NumEventGenerators = f.Generators
	c.BaseTime = f.BaseTime
	if _, err := nexmark.NewGenerator(c); err != nil {
		return c, fmt.Errorf("nexmark: %w", err)
	}
	return c, nil
}
