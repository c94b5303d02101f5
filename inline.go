package weir

import (
	"github.com/weir-stream/weir/internal/operator"
	"github.com/weir-stream/weir/internal/operator/dedup"
	"github.com/weir-stream/weir/internal/operator/join"
	"github.com/weir-stream/weir/internal/operator/keyed"
	"github.com/weir-stream/weir/internal/operator/process"
	"github.com/weir-stream/weir/internal/operator/sink"
	"github.com/weir-stream/weir/internal/operator/source"
	"github.com/weir-stream/weir/internal/operator/transform"
	"github.com/weir-stream/weir/internal/operator/window"
	"github.com/weir-stream/weir/internal/task"
)

// The operators and edges are generic, so their per-record code is
// compiled where a job's record types instantiate it: in the job's own
// package, which imports this one and none of the internal packages the
// code lives in. The compiler inlines a call there only when it has the
// callee's body, and this package's export data carries the body of
// another package's function only if this package inlined that function
// itself. Without help the small functions of the per-record paths
// (Window.MaxTimestamp and cleanupTime of package window, the state
// backend's KeyGroups and Shard, task.KeyGroup, task.HashUint64,
// task.Fail) stay calls in the job's code, and the generic functions
// that call them, such as keyed.Core.ShardOf, grow past the inlining
// budget: a keyed window count then spends 5-10% more CPU per record.
//
// The variable below makes this package compile each operator and edge
// once, for int64 records, which inlines those functions here, so that
// a job's package can inline them too. Nothing reads it; a new operator
// belongs in it. TestJobPackageInlinesOperatorHelpers checks the effect.
var _ = []any{
	task.EdgeImpl(&operator.Edge[int64]{}),
	keyed.Hasher[int64],
	source.New[int64],
	sink.New[int64],
	transform.Map[int64, int64],
	transform.Filter[int64],
	transform.FlatMap[int64, int64],
	transform.CoFlatMap[int64, int64, int64],
	task.NodeImpl(&window.Node[int64, int64, int64, int64]{}),
	task.NodeImpl(&process.Node[int64, int64, int64, int64]{}),
	task.NodeImpl(&process.CoNode[int64, int64, int64, int64, int64]{}),
	task.NodeImpl(&dedup.Node[int64, int64]{}),
	&join.Interval[int64, int64, int64]{},
}
