package tables

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/internal/sql/row"
)

// ReadAll reads a bounded source in full as one subtask, for a lookup
// join's table. It fails if the source has not ended after max rows.
func ReadAll(ctx context.Context, src connector.Source[row.Row], max int) ([]row.Row, error) {
	r, err := src.Open(ctx, connector.SubtaskInfo{Operator: "lookup", Subtask: 0, Parallelism: 1}, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []row.Row
	buf := make([]row.Row, 1024)
	for {
		n, err := r.Read(ctx, buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(out) > max {
			return nil, fmt.Errorf("lookup table has more than %d rows", max)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}
