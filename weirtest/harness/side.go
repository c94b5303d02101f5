package harness

import (
	"github.com/weir-stream/weir"
)

// CaptureSideOutput keeps the records the function emits to the side
// output tag with weir.Output, as a pipeline that takes
// weir.SideOutputOf(out, tag) would get them; SideOutput(h, tag) returns
// them, in order, with their event times. Without it the harness, like a
// pipeline that takes no stream of the tag, drops them. For harnesses of
// functions with a context that emits to side outputs (NewProcess,
// NewCoProcess); a window harness, whose functions emit to none, fails
// to build, naming the tag. A tag given twice is captured once.
func CaptureSideOutput[T any](tag *weir.OutputTag[T]) Option {
	return func(c *config) {
		for _, cp := range c.captures {
			if cp.tag == any(tag) {
				return
			}
		}
		c.captures = append(c.captures, capture{tag: tag, name: tag.Name(), port: func() any { return &recorder[T]{} }})
	}
}

// sideRecord stands for the records of a side output in the harness's
// pipeline, whose probe reads nothing: the harness gives the port a
// recorder of the tag's own type, which weir.Output checks when it
// emits. (Go cannot instantiate weir.SideOutputOf with both the tag's
// type, known to the option, and the operator's output type, known to
// the harness's constructor.)
type sideRecord struct{}

// sideOf adds probe, reading the side output name of the operator whose
// main output is main.
func sideOf[Out any](main weir.Stream[Out], name, probe string) {
	side := weir.SideOutputOf(main, weir.NewOutputTag[sideRecord](name))
	weir.Map(side, func(r sideRecord) sideRecord { return r }, weir.Name(probe))
}
