package kafka_test

import (
	"context"
	"fmt"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/format"
	"github.com/weir-stream/weir/connectors/kafka"
	"github.com/weir-stream/weir/connectors/stdout"
)

type Order struct {
	ID     int     `json:"id"`
	Amount float64 `json:"amount"`
}

// Whole records: each order with its key, Kafka timestamp and headers;
// tombstones (deleted keys) come as records with Tombstone set. The
// Kafka timestamp is the event time.
func ExampleRecordSource() {
	src, err := kafka.RecordSource(kafka.SourceOptions[Order]{
		Brokers: []string{"localhost:9092"}, Topics: []string{"orders"}, Format: format.JSON[Order]()})
	if err != nil {
		panic(err)
	}
	p := weir.NewPipeline()
	orders := weir.FromSource(p, "orders", src, weir.WithTimestamps(kafka.Record[Order].EventTime, 5*time.Second))
	lines := weir.Map(orders, func(r kafka.Record[Order]) string {
		if r.Tombstone {
			return fmt.Sprintf("%s deleted at %s/%d@%d", r.Key, r.Topic, r.Partition, r.Offset)
		}
		return fmt.Sprintf("%s: order %d of %.2f at %v", r.Key, r.Value.ID, r.Value.Amount, r.Timestamp)
	})
	weir.To(lines, "print", stdout.JSON[string]())
	_ = p.Run(context.Background())
}

// Values only, with each record's Kafka timestamp as its event time
// (nothing decoded from the value for it) and tombstones dropped.
func ExampleSource_kafkaTimestamps() {
	src, err := kafka.Source(kafka.SourceOptions[Order]{
		Brokers: []string{"localhost:9092"}, Topics: []string{"orders"}, Format: format.JSON[Order](),
		SkipTombstones: true})
	if err != nil {
		panic(err)
	}
	p := weir.NewPipeline()
	orders := weir.FromSource(p, "orders", src, weir.WithSourceTimestamps(5*time.Second))
	weir.To(orders, "print", stdout.JSON[Order]())
	_ = p.Run(context.Background())
}
