package jobs

import (
	"fmt"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/connectors/file"
)

// WordCount is one row of wordcount's output.
type WordCount struct {
	Word  string `json:"word"`
	Count int64  `json:"count"`
}

func init() {
	register(cli.Job{
		Name:  "wordcount",
		Short: "Count whitespace-separated words in text files",
		Long: `Count the whitespace-separated words of the input files and write one row
{"word": ..., "count": ...} per distinct word when the input ends.
Words are compared exactly (case-sensitive). The input must be UTF-8 text:
a line with bytes that are not valid UTF-8 is malformed, and --on-malformed
decides what happens to it (JSON output could not keep those bytes apart).`,
		Verify: verifyWordCount,
		Flags: func(fs *pflag.FlagSet) cli.Builder {
			var inputs []string
			fs.StringSliceVarP(&inputs, "input", "i", nil, "text file(s) to read (repeat or separate by commas)")
			return func(p *weir.Pipeline, cfg cli.JobConfig) error {
				if len(inputs) == 0 {
					return fmt.Errorf("wordcount: --input is required")
				}
				WordCountPipeline(p, file.TextLines(file.Options{OnMalformed: cfg.OnMalformed, Malformed: cfg.Malformed}, inputs...), cfg)
				return nil
			}
		},
	})
}

// WordCountPipeline adds the wordcount operators reading lines from src.
func WordCountPipeline(p *weir.Pipeline, src connector.Source[string], cfg cli.JobConfig) {
	lines := weir.FromSource(p, "lines", src)
	words := weir.FlatMap(lines, splitWords, weir.Name("split"))
	counts := weir.Process(weir.KeyBy(words, func(w string) string { return w }), newCounter, weir.Name("count"))
	weir.To(counts, "output", cli.OutputSink[WordCount](cfg))
}

// splitWords emits the words of line as strings.Fields would, without
// allocating a slice.
func splitWords(line string, emit func(string)) {
	start := -1
	for i, r := range line {
		if unicode.IsSpace(r) {
			if start >= 0 {
				emit(line[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		emit(line[start:])
	}
}

// counter counts a word's occurrences in state and emits the total when
// the input ends.
type counter struct {
	n *weir.ValueState[int64, string]
}

func newCounter() weir.KeyedProcessFunction[string, string, WordCount] { return &counter{} }

func (c *counter) Open(sc *weir.StateContext[string]) error {
	c.n = weir.NewValueState[int64](sc, "count")
	return nil
}

func (c *counter) ProcessElement(ctx *weir.KeyedContext[string, WordCount], _ string) error {
	n, ok := c.n.Value()
	if !ok {
		ctx.RegisterEventTimer(weir.EndOfTime)
	}
	c.n.Update(n + 1)
	return nil
}

func (c *counter) OnTimer(ctx *weir.KeyedContext[string, WordCount], _ int64, _ weir.TimeDomain) error {
	n, _ := c.n.Value()
	ctx.Emit(WordCount{Word: ctx.Key(), Count: n})
	c.n.Clear()
	return nil
}
