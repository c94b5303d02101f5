// Package dataflow is the vocabulary every layer of the runtime shares: the
// identifiers of a physical plan's parts (a subtask, a channel between two
// subtasks) and the bounds of event time (the watermarks before any and
// after all input).
//
// What belongs here: plain values that name or bound something and that
// two or more layers (planner, runtime, checkpoint coordinator, checkpoint
// store, engine, cluster, dashboard) exchange. Their only methods format
// them. Nothing with behaviour belongs here, and the package imports only
// the standard library and performs no I/O, so that pure packages such as
// internal/checkpoint may use it.
package dataflow

import (
	"fmt"
	"math"
)

// SubtaskID names one parallel instance of a vertex of the physical plan:
// subtask Subtask (from 0 to the vertex's parallelism - 1) of vertex Vertex.
// It is comparable and used as a map key.
//
// Its JSON form, {"vertex":V,"subtask":S}, is part of the checkpoint
// metadata stored on disk.
type SubtaskID struct {
	Vertex  int `json:"vertex"`
	Subtask int `json:"subtask"`
}

// String formats the subtask as "vertex.subtask", e.g. "2.0".
func (id SubtaskID) String() string { return fmt.Sprintf("%d.%d", id.Vertex, id.Subtask) }

// Channel names one channel of the physical plan: the one through which
// subtask From of the source of edge Edge (the edge's index in the plan)
// sends to subtask To of its target. It is comparable and used as a map
// key.
type Channel struct {
	Edge, From, To int
}

// Watermark bounds. A watermark is an event time in milliseconds: the
// promise that no record with an earlier timestamp follows.
const (
	// MinWatermark is the watermark before any has been received.
	MinWatermark = math.MinInt64
	// MaxWatermark is the final watermark: event time has ended.
	MaxWatermark = math.MaxInt64
)
