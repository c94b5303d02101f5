package weir

import (
	"fmt"

	"github.com/weir-stream/weir/internal/operator/window"
	"github.com/weir-stream/weir/internal/task"
)

// WindowContext is what a window function of ProcessWindowWithContext
// sees while a window fires: the key, the window, the main output and the
// side outputs (Output). It is valid only during that call. Records
// emitted either way carry the event time of the firing: the window's
// MaxTimestamp, or for GlobalWindow (count windows) the time of the
// record or timer that fired it.
type WindowContext[K comparable, Out any] struct {
	key  K
	win  Window
	emit func(Out)
	side sideEmitter
}

// Key returns the key of the firing window.
func (c *WindowContext[K, Out]) Key() K { return c.key }

// Window returns the firing window.
func (c *WindowContext[K, Out]) Window() Window { return c.win }

// Emit sends v to the main output.
func (c *WindowContext[K, Out]) Emit(v Out) { c.emit(v) }

func (c *WindowContext[K, Out]) sideEmitter() *sideEmitter { return &c.side }

// ProcessWindowWithContext is ProcessWindow with a context: fn gets all
// of a key's records of a window when it fires, and emits results to the
// main output (ctx.Emit) and to side outputs (Output); SideOutputOf the
// returned stream reads them. An error fails the job.
func ProcessWindowWithContext[K comparable, T, Out any](w WindowedStream[K, T], fn func(ctx *WindowContext[K, Out], records []T) error, os ...OpOption) Stream[Out] {
	add := func(l []T, v T) []T { return append(l, v) }
	merge := func(a, b []T) []T { return append(append([]T(nil), a...), b...) }
	newEmit := func(so *sideOutputs, outs []any, stamp func() int64) func(K, window.Window, []T, func(Out)) {
		c := &WindowContext[K, Out]{}
		c.side = sideEmitter{so: so, outs: outs, ts: stamp, name: so.node.Name}
		return func(k K, win window.Window, l []T, out func(Out)) {
			c.key, c.win, c.emit = k, Window(win), out
			if err := fn(c, l); err != nil {
				task.Fail(fmt.Errorf("window function for key %v, window [%d, %d): %w", k, win.Start, win.End, err))
			}
		}
	}
	return windowOp(w, func() []T { return nil }, add, merge, nil, opts("window-process", os), newEmit)
}
