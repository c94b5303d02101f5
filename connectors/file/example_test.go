package file_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/file"
)

type Order struct {
	ID     int     `json:"id"`
	Amount float64 `json:"amount"`
}

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "weir-example")
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "orders.jsonl")
	os.WriteFile(in, []byte(`{"id":1,"amount":9.5}
{"id":2,"amount":
{"id":3,"amount":12}
`), 0o666)

	// Read the orders, skipping the malformed line, and write them out.
	src := file.JSONLines[Order](file.JSONOptions{
		OnMalformed: connector.Skip,
		Malformed: func(e connector.MalformedError) {
			fmt.Println("skipped", filepath.Base(e.Where), e.Err)
		},
	}, in)
	sink := file.JSONSink[Order](filepath.Join(dir, "out"))

	info := connector.SubtaskInfo{Operator: "orders", Subtask: 0, Parallelism: 1}
	r, _ := src.Open(ctx, info, nil)
	w, _ := sink.Open(ctx, info)
	buf := make([]Order, 16)
	n, _ := r.Read(ctx, buf)
	w.Write(ctx, buf[:n])
	w.Flush(ctx)
	w.Close()
	r.Close()

	// The output is a directory of part files, one per subtask.
	parts, _ := file.Parts(filepath.Join(dir, "out"))
	for _, p := range parts {
		b, _ := os.ReadFile(p)
		fmt.Printf("%s:\n%s", filepath.Base(p), b)
	}
	// Output:
	// skipped orders.jsonl:2 (byte 22) json: cannot decode file_test.Order: unexpected end of JSON input
	// part-0.jsonl:
	// {"id":1,"amount":9.5}
	// {"id":3,"amount":12}
}
