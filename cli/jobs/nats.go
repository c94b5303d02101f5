package jobs

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/format"
	"github.com/weir-stream/weir/connectors/nats"
)

// NATSConfig is where keycount-nats reads and writes.
type NATSConfig struct {
	URL        string
	Stream     string
	Partitions []string
	Bounded    bool
	InFormat   string
	InSchema   string
	Subject    string
	OutFormat  string
	OutSchema  string
	DeadLetter string
	Rate       float64
	Window     time.Duration
	Lateness   time.Duration
}

func init() {
	register(cli.Job{
		Name:  "keycount-nats",
		Short: "keycount from a NATS JetStream stream to a JetStream subject",
		Long: `Read keycount events ({"key": 7, "time": ms}, or Avro with --in-schema)
from the JetStream stream --stream, count them per key in tumbling event-time
windows of --window, and publish the rows (key, window_start, window_end,
count) to --subject, which a stream must capture.

Subtask i of n reads the stream's partitions (--partitions, default the
stream's subjects) i, i+n, ...; its checkpointed position is the next stream
sequence. With --guarantee exactly-once the rows of each checkpoint are
published when it completes, with message ids the stream deduplicates.
--bounded ends the job when the stream has been read to its end.
--on-malformed skip drops undecodable messages (to --dead-letter if set).
See docs/connectors/nats.md.`,
		Flags: func(fs *pflag.FlagSet) cli.Builder {
			c := NATSConfig{}
			fs.StringVar(&c.URL, "nats-url", "", "NATS server URL (nats://host:port)")
			fs.StringVar(&c.Stream, "stream", "", "JetStream stream to read events from")
			fs.StringSliceVar(&c.Partitions, "partitions", nil, "filter subjects the stream is split by (default: the stream's subjects)")
			fs.BoolVar(&c.Bounded, "bounded", false, "end when every subtask has read its partitions to the end")
			fs.StringVar(&c.InFormat, "in-format", "json", "format of the events: json or avro")
			fs.StringVar(&c.InSchema, "in-schema", "", "Avro schema of the events (with --in-format avro)")
			fs.StringVar(&c.Subject, "subject", "", "subject to publish the counts to")
			fs.StringVar(&c.OutFormat, "out-format", "json", "format of the counts: json or avro")
			fs.StringVar(&c.OutSchema, "out-schema", "", "Avro schema of the counts (with --out-format avro)")
			fs.StringVar(&c.DeadLetter, "dead-letter", "", "subject for undecodable events (with --on-malformed skip)")
			fs.Float64Var(&c.Rate, "rate", 0, "read at most this many events per second of wall-clock time (0: as fast as possible)")
			fs.DurationVar(&c.Window, "window", time.Second, "tumbling window size (event time)")
			fs.DurationVar(&c.Lateness, "out-of-orderness", time.Second, "how far out of event-time order events may arrive before they count as late")
			cli.MayChangeOnRestore(fs, "nats-url", "rate", "dead-letter")
			return func(p *weir.Pipeline, cfg cli.JobConfig) error {
				src, sink, err := c.connectors(cfg)
				if err != nil {
					return err
				}
				var in connector.Source[KeyEvent] = src
				if c.Rate > 0 {
					in = connector.Throttle(src, c.Rate)
				}
				weir.To(keyCounts(p, in, c.Window, c.Lateness), "nats", connector.Sink[KeyCount](sink))
				return nil
			}
		},
	})
}

// connectors checks the flags and builds the source and the sink.
func (c NATSConfig) connectors(cfg cli.JobConfig) (*nats.Source[KeyEvent], *nats.Sink[KeyCount], error) {
	if c.URL == "" || c.Stream == "" || c.Subject == "" {
		return nil, nil, fmt.Errorf("keycount-nats: --nats-url, --stream and --subject are required")
	}
	if c.Window < time.Millisecond {
		return nil, nil, fmt.Errorf("keycount-nats: --window must be at least 1ms, got %v", c.Window)
	}
	in, err := format.New[KeyEvent](c.InFormat, c.InSchema)
	if err != nil {
		return nil, nil, fmt.Errorf("keycount-nats: --in-format: %w", err)
	}
	out, err := format.New[KeyCount](c.OutFormat, c.OutSchema)
	if err != nil {
		return nil, nil, fmt.Errorf("keycount-nats: --out-format: %w", err)
	}
	conn := nats.ConnOptions{URL: c.URL}
	src, err := nats.NewSource(nats.SourceOptions[KeyEvent]{ConnOptions: conn, Stream: c.Stream, Partitions: c.Partitions,
		Format: in, Bounded: c.Bounded, OnMalformed: cfg.OnMalformed, Malformed: cfg.Malformed, DeadLetter: c.DeadLetter})
	if err != nil {
		return nil, nil, err
	}
	sink, err := nats.NewSink(nats.SinkOptions[KeyCount]{ConnOptions: conn, Subject: c.Subject, Format: out})
	if err != nil {
		return nil, nil, err
	}
	return src, sink, nil
}
