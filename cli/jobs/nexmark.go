package jobs

import (
	"fmt"
	"github.com/weir-stream/weir/connector"
	"strings"

	"github.com/spf13/pflag"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/nexmark"
	"github.com/weir-stream/weir/nexmark/queries"
)

func init() {
	register(cli.Job{
		Name:  "nexmark",
		Short: "Run a Nexmark benchmark query over generated auction events",
		Long: `Generate Nexmark events (people, auctions and bids, as Apache Beam's
generator does) and run one Nexmark query over them, writing its result rows
as JSON lines with the SQL output column names. See docs/nexmark.md.`,
		Verify: verifyNexmark,
		Flags: func(fs *pflag.FlagSet) cli.Builder {
			var f queries.Flags
			var query string
			var rate float64
			var o queries.Options
			fs.StringVarP(&query, "query", "q", "q0", "the query: "+strings.Join(queries.Names(), ", "))
			f.Define(fs)
			fs.Float64Var(&rate, "rate", 0, "throttle generation to this many events per second of wall-clock time (0: as fast as possible)")
			fs.DurationVar(&o.StateTTL, "state-ttl", 0, "give the state of q20's unbounded join this time-to-live of processing time (0: keep it for ever); a restore may change it, not add or remove it")
			// A restore that adds or removes the time-to-live is refused by
			// the state itself, naming it.
			cli.MayChangeOnRestore(fs, "rate", "state-ttl")
			return func(p *weir.Pipeline, cfg cli.JobConfig) error {
				q, ok := queries.Lookup(query)
				if !ok {
					return fmt.Errorf("nexmark: unknown query %q; queries: %s", query, strings.Join(queries.Names(), ", "))
				}
				c, err := f.Config()
				if err != nil {
					return err
				}
				if rate < 0 {
					return fmt.Errorf("nexmark: --rate must not be negative, got %v", rate)
				}
				if o.StateTTL < 0 {
					return fmt.Errorf("nexmark: --state-ttl must not be negative, got %v", o.StateTTL)
				}
				src, err := nexmark.Source(c)
				if err != nil {
					return err
				}
				if rate > 0 {
					src = connector.Throttle(src, rate)
				}
				in := queries.EventsFrom(p, src)
				out := queries.Output{Stdout: cfg.Stdout}
				if cfg.Output != "-" && cfg.Output != "" {
					out.Dir = cfg.Output
				}
				return q.BuildWith(in, out, o)
			}
		},
	})
}
