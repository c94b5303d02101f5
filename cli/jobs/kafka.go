package jobs

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/format"
	"github.com/weir-stream/weir/connectors/kafka"
	"github.com/weir-stream/weir/nexmark"
	"github.com/weir-stream/weir/nexmark/queries"
)

// The Kafka jobs: nexmark-to-kafka writes generated Nexmark bids to a
// topic; kafka-q1 reads bids from a topic, converts their prices to euros
// (Nexmark q1) and writes them to another topic. Together they make the
// Kafka -> weir -> Kafka pipeline of the tests and benchmarks.

// BidAvroSchema is the Avro schema of nexmark.Bid as the Kafka jobs write
// it with --format avro.
const BidAvroSchema = `{"type":"record","name":"Bid","namespace":"weir.nexmark","fields":[
 {"name":"auction","type":"long"},{"name":"bidder","type":"long"},{"name":"price","type":"long"},
 {"name":"channel","type":"string"},{"name":"url","type":"string"},
 {"name":"dateTime","type":"long"},{"name":"extra","type":"string"}]}`

// KafkaBid is a Nexmark bid as the Kafka jobs encode it (JSON or Avro).
type KafkaBid struct {
	Auction  int64  `json:"auction" avro:"auction"`
	Bidder   int64  `json:"bidder" avro:"bidder"`
	Price    int64  `json:"price" avro:"price"`
	Channel  string `json:"channel" avro:"channel"`
	URL      string `json:"url" avro:"url"`
	DateTime int64  `json:"dateTime" avro:"dateTime"`
	Extra    string `json:"extra" avro:"extra"`
}

// KafkaFlags are the flags of the Kafka jobs.
type KafkaFlags struct {
	Brokers     string
	Format      string
	Delivery    string
	TxnTimeout  time.Duration
	SourceTopic string
	SinkTopic   string
	Bounded     bool
	Start       string
	DeadLetter  string
	Group       string
	Partitions  time.Duration
	Connect     time.Duration
}

func (f *KafkaFlags) defineSink(fs *pflag.FlagSet) {
	fs.StringVar(&f.Brokers, "brokers", "", "Kafka bootstrap brokers, comma-separated host:port (required)")
	fs.StringVar(&f.Format, "format", "json", "record value format: json or avro (the Bid schema, see docs/connectors/kafka.md)")
	fs.StringVar(&f.SinkTopic, "sink-topic", "", "topic to write to (required; it must exist)")
	fs.StringVar(&f.Delivery, "delivery", "exactly-once", "sink delivery: exactly-once (Kafka transactions committed with checkpoints) or at-least-once")
	fs.DurationVar(&f.Connect, "connect-timeout", 30*time.Second, "how long a subtask waits for the brokers when it opens (retrying with backoff) before it fails")
	fs.DurationVar(&f.TxnTimeout, "transaction-timeout", 0, "Kafka transaction timeout of an exactly-once sink (0: 10m; at most the broker's transaction.max.timeout.ms)")
}

func (f *KafkaFlags) brokers() ([]string, error) {
	if f.Brokers == "" {
		return nil, fmt.Errorf("--brokers is required")
	}
	return strings.Split(f.Brokers, ","), nil
}

func bidFormat(name string) (format.Format[KafkaBid], error) {
	schema := ""
	if name == "avro" {
		schema = BidAvroSchema
	}
	return format.New[KafkaBid](name, schema)
}

func (f *KafkaFlags) sink(operator string) (connector.Sink[KafkaBid], error) {
	b, err := f.brokers()
	if err != nil {
		return nil, err
	}
	fm, err := bidFormat(f.Format)
	if err != nil {
		return nil, err
	}
	var d kafka.Delivery
	switch f.Delivery {
	case "exactly-once":
		d = kafka.ExactlyOnce
	case "at-least-once":
		d = kafka.AtLeastOnce
	default:
		return nil, fmt.Errorf("--delivery must be exactly-once or at-least-once, not %q", f.Delivery)
	}
	if f.SinkTopic == "" {
		return nil, fmt.Errorf("--sink-topic is required")
	}
	return kafka.Sink(kafka.SinkOptions[KafkaBid]{Brokers: b, Topic: f.SinkTopic, Format: fm, Delivery: d,
		TransactionTimeout: f.TxnTimeout, ConnectTimeout: f.Connect, TransactionalIDPrefix: "weir-" + f.SinkTopic + "-" + operator,
		Key: func(v KafkaBid) []byte { return fmt.Appendf(nil, "%d", v.Auction) }})
}

func init() {
	register(cli.Job{
		Name:  "nexmark-to-kafka",
		Short: "Write generated Nexmark bids to a Kafka topic",
		Long: `Generate Nexmark events (see the nexmark job) and write their bids to a
Kafka topic, keyed by auction, exactly-once by default. The generator is a
replayable source, so with --guarantee exactly-once the topic holds every
bid exactly once, also across failures and restores. See
docs/connectors/kafka.md.`,
		Flags: func(fs *pflag.FlagSet) cli.Builder {
			var nf queries.Flags
			var kf KafkaFlags
			var rate float64
			nf.Define(fs)
			kf.defineSink(fs)
			fs.Float64Var(&rate, "rate", 0, "limit the generator to this many events per second in all (0: as fast as possible)")
			cli.MayChangeOnRestore(fs, "rate", "brokers", "connect-timeout", "transaction-timeout")
			return func(p *weir.Pipeline, _ cli.JobConfig) error {
				c, err := nf.Config()
				if err != nil {
					return err
				}
				src, err := nexmark.Source(c)
				if err != nil {
					return err
				}
				if rate < 0 {
					return fmt.Errorf("--rate must not be negative, got %v", rate)
				}
				if rate > 0 {
					src = connector.Throttle(src, rate)
				}
				sink, err := kf.sink("nexmark-to-kafka")
				if err != nil {
					return fmt.Errorf("nexmark-to-kafka: %w", err)
				}
				events := weir.FromSource(p, "nexmark", src)
				bids := weir.FlatMap(events, func(e nexmark.Event, emit func(KafkaBid)) {
					if e.Kind == nexmark.BidEvent {
						emit(toKafkaBid(e.Bid))
					}
				}, weir.Name("bids"))
				weir.To(bids, "kafka", sink)
				return nil
			}
		},
	})
	register(cli.Job{
		Name:  "kafka-q1",
		Short: "Read Nexmark bids from Kafka, convert prices to euros (q1), write them to Kafka",
		Long: `Read Nexmark bids from --source-topic (as nexmark-to-kafka writes them),
convert each price from dollars to euro cents (Nexmark q1: x 0.908, rounded
down) and write the bids to --sink-topic. With --guarantee exactly-once and
the default --delivery the output topic holds each input bid's result
exactly once across failures: the source's offsets live in the checkpoints
and the sink commits a Kafka transaction per checkpoint. An undecodable
input record fails the job naming topic, partition and offset, or, with
--on-malformed skip and --dead-letter-topic, goes to that topic. With
--history DIR the job first reads the bids in the JSON-lines files of DIR
and then the topic, through the hybrid source (connectors/hybrid), with
the same guarantees across the switch. See docs/connectors/kafka.md.`,
		Flags: func(fs *pflag.FlagSet) cli.Builder {
			var kf KafkaFlags
			var history string
			var rate float64
			kf.defineSink(fs)
			fs.StringVar(&history, "history", "", "first read the bids in the JSON-lines files of this directory (in name order), then the topic")
			fs.Float64Var(&rate, "rate", 0, "read at most this many bids per second in all (0: as fast as possible)")
			fs.StringVar(&kf.SourceTopic, "source-topic", "", "topic to read bids from (required; it must exist)")
			fs.BoolVar(&kf.Bounded, "bounded", false, "stop at the end offsets the source topic has when the job starts")
			fs.StringVar(&kf.Start, "start", "earliest", "where a fresh job starts reading: earliest, latest, or group (with --group)")
			fs.StringVar(&kf.Group, "group", "", "consumer group to start from (--start group) and to commit offsets to for monitoring")
			fs.StringVar(&kf.DeadLetter, "dead-letter-topic", "", "with --on-malformed skip: write undecodable records to this topic")
			fs.DurationVar(&kf.Partitions, "partition-idle-timeout", 0, "a partition without records this long stops holding back the watermark (0: never)")
			// --start and --group choose where a fresh job starts; a
			// restored one reads on from its checkpoint's offsets.
			cli.MayChangeOnRestore(fs, "brokers", "connect-timeout", "transaction-timeout", "start", "group", "dead-letter-topic", "rate")
			return func(p *weir.Pipeline, cfg cli.JobConfig) error {
				src, err := kf.source(cfg)
				if err == nil && history != "" {
					src, err = withHistory(history, cfg, src)
				}
				if err == nil && rate < 0 {
					err = fmt.Errorf("--rate must not be negative, got %v", rate)
				}
				if err != nil {
					return fmt.Errorf("kafka-q1: %w", err)
				}
				src = connector.Throttle(src, rate)
				sink, err := kf.sink("kafka-q1")
				if err != nil {
					return fmt.Errorf("kafka-q1: %w", err)
				}
				bids := weir.FromSource(p, "kafka", src, weir.WithTimestamps(func(b KafkaBid) int64 { return b.DateTime }, time.Second))
				euros := weir.Map(bids, func(b KafkaBid) KafkaBid {
					b.Price = b.Price * 908 / 1000
					return b
				}, weir.Name("q1"))
				weir.To(euros, "kafka-out", sink)
				return nil
			}
		},
	})
}

func (f *KafkaFlags) source(cfg cli.JobConfig) (connector.Source[KafkaBid], error) {
	b, err := f.brokers()
	if err != nil {
		return nil, err
	}
	fm, err := bidFormat(f.Format)
	if err != nil {
		return nil, err
	}
	if f.SourceTopic == "" {
		return nil, fmt.Errorf("--source-topic is required")
	}
	start := map[string]kafka.Start{"earliest": kafka.StartEarliest, "latest": kafka.StartLatest, "group": kafka.StartGroupOffsets}
	st, ok := start[f.Start]
	if !ok {
		return nil, fmt.Errorf("--start must be earliest, latest or group, not %q", f.Start)
	}
	if f.DeadLetter != "" && cfg.OnMalformed != connector.Skip {
		return nil, fmt.Errorf("--dead-letter-topic needs --on-malformed skip")
	}
	return kafka.Source(kafka.SourceOptions[KafkaBid]{Brokers: b, Topics: []string{f.SourceTopic}, Format: fm,
		Start: st, Group: f.Group, CommitOffsets: f.Group != "", Bounded: f.Bounded,
		OnMalformed: cfg.OnMalformed, DeadLetterTopic: f.DeadLetter, PartitionIdleTimeout: f.Partitions,
		ConnectTimeout: f.Connect})
}

func toKafkaBid(b nexmark.Bid) KafkaBid {
	return KafkaBid{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel, URL: b.URL,
		DateTime: b.DateTime, Extra: b.Extra}
}
