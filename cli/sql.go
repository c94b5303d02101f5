package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/sql"
)

func init() {
	RegisterJob(sqlJob)
	AddCommand(func(stdout, stderr io.Writer) *cobra.Command {
		c := jobCommand(sqlJob, stdout, stderr)
		c.Use = "sql (-f FILE | -e SQL)... [--var NAME=VALUE]... [flags]"
		return c
	})
}

// errExplained ends a run whose script only explains itself (EXPLAIN
// statements): not a failure.
var errExplained = errors.New("the script was explained, not run (it holds EXPLAIN statements)")

var sqlJob = Job{
	Name:  "sql",
	Short: "Run a SQL script (Flink's dialect) on an embedded local cluster",
	Long: `Run a script of SQL statements: CREATE TABLE (with a connector, a watermark,
computed and metadata columns), CREATE VIEW, CREATE FUNCTION, SET, and
INSERT INTO ... SELECT or bare queries, which become one job. -f reads a file
and -e takes the text; several are read in order as one script. --var
NAME=VALUE fills in ${NAME} in the text, as Nexmark's scripts use it. A bare
query's rows go to --output (a directory of JSON-lines files) or, with the
default "-", to standard output in Flink's print format.

--explain prints each statement's logical and optimized plan, the warnings
of operators whose state grows without bound, and the physical plan, and
exits. All the job flags of weir run apply (--guarantee, --checkpoint-interval,
--failover, --state-backend, --http, ...). On a cluster: weir submit sql -f
FILE. The dialect, connectors and functions: docs/sql.md.`,
	Flags: func(fs *pflag.FlagSet) Builder {
		files := fs.StringArrayP("file", "f", nil, "a file of SQL statements (repeatable; read in order)")
		texts := fs.StringArrayP("execute", "e", nil, "SQL statements (repeatable; after the files)")
		vars := fs.StringArray("var", nil, "NAME=VALUE: replace ${NAME} in the script (repeatable)")
		return func(p *weir.Pipeline, cfg JobConfig) error {
			var parts []string
			for _, f := range *files {
				data, err := os.ReadFile(f)
				if err != nil {
					return err
				}
				parts = append(parts, string(data))
			}
			parts = append(parts, *texts...)
			if len(parts) == 0 {
				return fmt.Errorf("give the script with -f FILE or -e SQL")
			}
			o := sql.Options{Vars: map[string]string{}, Stdout: cfg.Stdout}
			for _, v := range *vars {
				name, value, ok := strings.Cut(v, "=")
				if !ok || name == "" {
					return fmt.Errorf("--var %q: want NAME=VALUE", v)
				}
				o.Vars[name] = value
			}
			if cfg.Output != "-" && cfg.Output != "" {
				o.QueryOutput = cfg.Output
			}
			s, err := sql.Parse(strings.Join(parts, ";\n"), o)
			if err != nil {
				return err
			}
			if cfg.Explain || s.ExplainOnly() {
				fmt.Fprintln(cfg.Stdout, s.Explain())
				if s.ExplainOnly() {
					return errExplained
				}
				fmt.Fprintln(cfg.Stdout, "== Physical plan ==")
			} else if cfg.Log != nil {
				for _, w := range s.Warnings() {
					cfg.Log("warning: " + w)
				}
			}
			return s.Build(p)
		}
	},
}
