package weir_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connectors/collection"
)

// Sessions of the clock: clicks without event time, grouped per user
// into sessions of activity with gaps of at most half an hour between
// clicks, by when they arrive. Here every click arrives at once, so each
// user has one session, which fires when the input ends; in a long-running
// job a session fires half an hour after its last click. The sessions'
// bounds are times of the clock, so the example prints only the counts.
func ExampleSessionProcessingTime() {
	p := weir.NewPipeline()
	clicks := weir.FromSource(p, "clicks", collection.Of(
		userClick{User: "ann"}, userClick{User: "bob"}, userClick{User: "ann"}, userClick{User: "ann"})) // no event time
	w := weir.WindowBy(weir.KeyBy(clicks, func(c userClick) string { return c.User }), weir.SessionProcessingTime(30*time.Minute))
	sessions := weir.ProcessWindow(w, func(user string, win weir.Window, cs []userClick, emit func(string)) error {
		emit(fmt.Sprintf("%s: a session of %d clicks", user, len(cs)))
		return nil
	})
	out := collection.NewSink[string]()
	weir.To(sessions, "out", out)
	if err := p.Run(context.Background()); err != nil {
		panic(err)
	}
	for _, s := range slices.Sorted(slices.Values(out.Records())) {
		fmt.Println(s)
	}
	// Output:
	// ann: a session of 3 clicks
	// bob: a session of 1 clicks
}
