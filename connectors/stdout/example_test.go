package stdout_test

import (
	"context"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/stdout"
)

func ExampleJSON() {
	type reading struct {
		Sensor string  `json:"sensor"`
		Value  float64 `json:"value"`
	}
	ctx := context.Background()
	w, _ := stdout.JSON[reading]().Open(ctx, connector.SubtaskInfo{Operator: "print", Parallelism: 1})
	w.Write(ctx, []reading{{"a", 1.5}, {"b<2>", -3}})
	w.Flush(ctx)
	w.Close()
	// Output:
	// {"sensor":"a","value":1.5}
	// {"sensor":"b<2>","value":-3}
}
