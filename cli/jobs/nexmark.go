package jobs

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/cli"
	"github.com/weir-stream/weir/nexmark/queries"
)

func init() {
	cli.RegisterJob(cli.Job{
		Name:  "nexmark",
		Short: "Run a Nexmark benchmark query over generated auction events",
		Long: `Generate Nexmark events (people, auctions and bids, as Apache Beam's
generator does) and run one Nexmark query over them, writing its result rows
as JSON lines with the SQL output column names. See docs/nexmark.md.`,
		Verify: verifyNexmark,
		Flags: func(fs *pflag.FlagSet) cli.Builder {
			var f queries.Flags
			var query string
			fs.StringVarP(&query, "query", "q", "q0", "the query: "+strings.Join(queries.Names(), ", "))
			f.Define(fs)
			return func(p *weir.Pipeline, cfg cli.JobConfig) error {
				q, ok := queries.Lookup(query)
				if !ok {
					return fmt.Errorf("nexmark: unknown query %q; queries: %s", query, strings.Join(queries.Names(), ", "))
				}
				c, err := f.Config()
				if err != nil {
					return err
				}
				in, err := queries.Events(p, c)
				if err != nil {
					return err
				}
				out := queries.Output{Stdout: cfg.Stdout}
				if cfg.Output != "-" && cfg.Output != "" {
					out.Dir = cfg.Output
				}
				q.Build(in, out)
				return nil
			}
		},
	})
}
