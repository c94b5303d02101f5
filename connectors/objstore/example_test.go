package objstore_test

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/generator"
	"github.com/weir-stream/weir/connectors/objstore"
)

type click struct {
	User    string `json:"user" parquet:"user"`
	Country string `json:"country" parquet:"country"`
	TimeMs  int64  `json:"time_ms" parquet:"time_ms"`
}

// Write a stream exactly-once to an S3-compatible store as Parquet part
// files, partitioned by the hour of event time and rolled at 128 MiB or
// 15 minutes. (The job needs a reachable bucket, so it is not run here.)
func ExampleNewSink() {
	p := weir.NewPipeline(weir.WithGuarantee(weir.ExactlyOnce),
		weir.WithCheckpoints(weir.CheckpointConfig{Interval: time.Minute}))
	clicks := weir.FromSource(p, "clicks", generator.New(1000, func(i int64) click {
		return click{User: "u" + strconv.FormatInt(i%10, 10), Country: "NL", TimeMs: 1_700_000_000_000 + i*1000}
	}))
	weir.To(clicks, "lake", objstore.NewSink(objstore.SinkConfig[click]{
		Location: "s3://my-bucket/clicks?endpoint=http://127.0.0.1:7070",
		Format:   objstore.Parquet[click](),
		Bucket:   objstore.EventTimeBuckets(func(c click) time.Time { return time.UnixMilli(c.TimeMs) }),
		Rolling:  objstore.RollingPolicy{MaxFileSize: 128 << 20, RolloverInterval: 15 * time.Minute},
	}))
	_ = p // p.Run(ctx) runs the job
}

// Read the Parquet part files under a prefix, discovering new ones every
// ten seconds. (Not run here: it needs a reachable bucket.)
func ExampleNewSource() {
	p := weir.NewPipeline(weir.WithGuarantee(weir.ExactlyOnce))
	clicks := weir.FromSource(p, "clicks", objstore.NewSource(objstore.SourceConfig[click]{
		Location:          "s3://my-bucket/clicks?endpoint=http://127.0.0.1:7070",
		Format:            objstore.Parquet[click](),
		DiscoveryInterval: 10 * time.Second,
	}))
	_ = clicks
}

// The event-time bucket assigner names Hive-style directories by hour.
func ExampleEventTimeBuckets() {
	bucket := objstore.EventTimeBuckets(func(c click) time.Time { return time.UnixMilli(c.TimeMs) })
	fmt.Println(bucket(click{TimeMs: 1_700_000_000_000}))
	// Output: dt=2023-11-14/hour=22
}

// A bucket assigner can partition by a column instead.
func ExampleSinkConfig_bucketByColumn() {
	cfg := objstore.SinkConfig[click]{
		Location: "s3://my-bucket/clicks",
		Format:   objstore.JSONLines[click](),
		Bucket:   func(c click) string { return "country=" + c.Country },
	}
	fmt.Println(cfg.Bucket(click{Country: "NL"}))
	// Output: country=NL
}

// The CSV format writes a header at the top of every part file.
func ExampleCSV() {
	f := objstore.CSV(func(c click) []string { return []string{c.User, c.Country} }, nil,
		objstore.CSVOptions{Header: []string{"user", "country"}})
	var buf bytes.Buffer
	enc := f.NewEncoder(&buf)
	for _, c := range []click{{User: "ann", Country: "NL"}, {User: "bob, jr", Country: "BE"}} {
		if err := enc.Encode(&c); err != nil {
			panic(err)
		}
	}
	if err := enc.Close(); err != nil {
		panic(err)
	}
	fmt.Print(buf.String())
	// Output:
	// user,country
	// ann,NL
	// "bob, jr",BE
}
