package jobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/file"
	"github.com/weir-stream/weir/connectors/generator"
)

// KeyEvent is one generated keycount event.
type KeyEvent struct {
	Key  int64 `json:"key"`
	Time int64 `json:"time"` // epoch milliseconds
}

// UnmarshalJSON decodes {"key": 7, "time": ms}. Both fields are required:
// an event without one (or with null) is an error, not key 0 or time 0.
func (e *KeyEvent) UnmarshalJSON(data []byte) error {
	var raw struct {
		Key  *int64 `json:"key"`
		Time *int64 `json:"time"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	switch {
	case raw.Key == nil:
		return errors.New(`missing field "key"`)
	case raw.Time == nil:
		return errors.New(`missing field "time"`)
	}
	*e = KeyEvent{Key: *raw.Key, Time: *raw.Time}
	return nil
}

// KeyCount is one row of keycount's output.
type KeyCount struct {
	Key         int64 `json:"key"`
	WindowStart int64 `json:"window_start"`
	WindowEnd   int64 `json:"window_end"`
	Count       int64 `json:"count"`
}

// KeyCountConfig describes keycount's generated input and its window.
type KeyCountConfig struct {
	Events int64
	Keys   int64
	Window time.Duration
	// TPS is the event-time density: event i happens at i/TPS seconds.
	TPS  int64
	Seed uint64
	// Rate, when positive, throttles the generator to this many events
	// per second of wall-clock time.
	Rate float64
	// Inputs, when set, are JSON-lines files of events ({"key": 1,
	// "time": ms}) read instead of generated ones.
	Inputs []string
	// SinkDelay delays every batch the sink writes, as a slow external
	// system would (to watch backpressure).
	SinkDelay time.Duration
}

// Event returns event i: its key and time depend only on the seed and i.
func (c KeyCountConfig) Event(i int64) KeyEvent {
	return KeyEvent{Key: int64(generator.Mix(c.Seed, uint64(i)) % uint64(c.Keys)), Time: i * 1000 / c.TPS}
}

// Validate reports a configuration that cannot run.
func (c KeyCountConfig) Validate() error {
	switch {
	case c.Events < 0:
		return fmt.Errorf("keycount: --events must not be negative, got %d", c.Events)
	case c.Keys < 1:
		return fmt.Errorf("keycount: --keys must be at least 1, got %d", c.Keys)
	case c.Window < time.Millisecond:
		return fmt.Errorf("keycount: --window must be at least 1ms, got %v", c.Window)
	case c.TPS < 1:
		return fmt.Errorf("keycount: --tps must be at least 1, got %d", c.TPS)
	}
	return nil
}

func init() {
	register(cli.Job{
		Name:  "keycount",
		Short: "Count generated events per key in tumbling event-time windows",
		Long: `Generate --events events with keys drawn from --keys keys and event times
spaced 1/--tps seconds apart (event i's key and time depend only on --seed
and i, so results do not depend on parallelism), and count them per key in
tumbling event-time windows of --window. Output rows:
{"key": ..., "window_start": ms, "window_end": ms, "count": ...}.

With --input, events are read from JSON-lines files instead, one event
{"key": 7, "time": 1700000000000} per line; --on-malformed decides what
happens to lines that do not parse.`,
		Verify: verifyKeyCount,
		Flags: func(fs *pflag.FlagSet) cli.Builder {
			c := KeyCountConfig{}
			fs.Int64Var(&c.Events, "events", 1_000_000, "number of events to generate")
			fs.Int64Var(&c.Keys, "keys", 1000, "number of distinct keys")
			fs.DurationVar(&c.Window, "window", time.Second, "tumbling window size (event time)")
			fs.Int64Var(&c.TPS, "tps", 100_000, "events per second of event time")
			fs.Uint64Var(&c.Seed, "seed", 1, "seed of the key sequence")
			fs.Float64Var(&c.Rate, "rate", 0, "throttle generation to this many events per second of wall-clock time (0: as fast as possible)")
			fs.StringSliceVarP(&c.Inputs, "input", "i", nil, "read events from these JSON-lines files instead of generating them")
			fs.DurationVar(&c.SinkDelay, "sink-delay", 0, "delay every batch the sink writes by this long, as a slow external system would (to watch backpressure)")
			// Event i does not depend on --events, so a restore may run on
			// to more or fewer of them.
			cli.MayChangeOnRestore(fs, "events", "rate", "sink-delay")
			return func(p *weir.Pipeline, cfg cli.JobConfig) error {
				if err := c.Validate(); err != nil {
					return err
				}
				KeyCountPipeline(p, c, cfg)
				return nil
			}
		},
	})
}

// KeyCountPipeline adds the keycount operators.
func KeyCountPipeline(p *weir.Pipeline, c KeyCountConfig, cfg cli.JobConfig) {
	var gopts []generator.Option
	if c.Rate > 0 {
		gopts = append(gopts, generator.WithRate(c.Rate))
	}
	var src connector.Source[KeyEvent] = generator.New(c.Events, c.Event, gopts...)
	delay := time.Duration(0) // generated events are in order
	if len(c.Inputs) > 0 {
		src = file.JSONLines[KeyEvent](file.JSONOptions{OnMalformed: cfg.OnMalformed, Malformed: cfg.Malformed}, c.Inputs...)
		delay = time.Second
	}
	events := weir.FromSource(p, "events", src, weir.WithTimestamps(func(e KeyEvent) int64 { return e.Time }, delay))
	windows := weir.WindowBy(weir.KeyBy(events, func(e KeyEvent) int64 { return e.Key }), weir.Tumbling(c.Window))
	counts := weir.AggregateWindow(windows, countEvents{}, weir.Name("count"))
	rows := weir.Map(counts, func(w weir.Windowed[int64, int64]) KeyCount {
		return KeyCount{Key: w.Key, WindowStart: w.Window.Start, WindowEnd: w.Window.End, Count: w.Value}
	}, weir.Name("format"))
	weir.To(rows, "output", slowly(cli.OutputSink[KeyCount](cfg), c.SinkDelay))
}

type countEvents struct{}

func (countEvents) Create() int64                 { return 0 }
func (countEvents) Add(n int64, _ KeyEvent) int64 { return n + 1 }
func (countEvents) Merge(a, b int64) int64        { return a + b }
func (countEvents) Result(n int64) int64          { return n }
