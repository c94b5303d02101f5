package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/connector"
	"github.com/weir-stream/weir/nexmark"
	"github.com/weir-stream/weir/nexmark/queries"
	"github.com/weir-stream/weir/sql"
)

func init() {
	addBuiltinCommand(nexmarkCommand)
	addBuiltinCommand(benchCommand)
}

func nexmarkCommand(stdout, _ io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "nexmark", Short: "Nexmark benchmark tools"}
	var f queries.Flags
	var output string
	gen := &cobra.Command{
		Use:   "generate",
		Short: "Write Nexmark events as JSON lines",
		Long: `Write the events of Beam's Nexmark generator as JSON lines: one object per
line with "type" (person, auction or bid) and the entity's fields named as in
the Nexmark SQL schema, times in epoch milliseconds. With several generators
the events are interleaved one from each generator in turn.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.Config()
			if err != nil {
				return usageError{err}
			}
			w := stdout
			if output != "-" {
				file, err := os.Create(output)
				if err != nil {
					return err
				}
				defer file.Close()
				w = file
			}
			return generate(cmd.Context(), c, w)
		},
	}
	f.Define(gen.Flags())
	gen.Flags().StringVarP(&output, "output", "o", "-", `file to write, or "-" for standard output`)
	cmd.AddCommand(gen)
	return cmd
}

// generate writes the events of c in the order a single source subtask
// reads them.
func generate(ctx context.Context, c nexmark.Config, w io.Writer) error {
	src, err := nexmark.Source(c)
	if err != nil {
		return err
	}
	r, err := src.Open(ctx, connectorInfo(), nil)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	buf := make([]nexmark.Event, 1024)
	var line []byte
	for {
		n, err := r.Read(ctx, buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		for i := range n {
			line = nexmark.AppendJSONLine(line[:0], &buf[i])
			if _, err := bw.Write(line); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

func benchCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Measure weir's throughput"}
	var f queries.Flags
	var query string
	var parallelism int
	var ft ftFlags
	var fromSQL bool
	nx := &cobra.Command{
		Use:   "nexmark",
		Short: "Measure a Nexmark query: events/s and events per CPU-second",
		Long: `Measure a Nexmark query over generated events: its wall time and the
process's CPU time, as events per second and events per CPU-second.

By default the query is weir's Go-API query (package nexmark/queries) with
its output discarded. With --sql it is the query's published Flink SQL
(Nexmark's ddl_gen.sql, ddl_views.sql and qN.sql, embedded in weir) run by
weir's SQL layer with its published sink, mostly 'blackhole', over the same
events: only the generator table's options gain --generators and
--base-time.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, ok := queries.Lookup(query)
			if !ok && !fromSQL {
				return usagef("unknown query %q; queries: %v", query, queries.Names())
			}
			c, err := f.Config()
			if err != nil {
				return usageError{err}
			}
			if ft.verify {
				return usagef("--verify belongs to weir run; bench measures and does not compare outputs")
			}
			opts, err := ft.options()
			if err != nil {
				return err
			}
			p := weir.NewPipeline(append(opts, weir.WithParallelism(parallelism), weir.WithName("bench-"+query))...)
			label := query
			if fromSQL {
				if err := buildSQL(p, query, c); err != nil {
					return err
				}
				label += " (SQL)"
			} else {
				in, err := queries.Events(p, c)
				if err != nil {
					return err
				}
				q.Build(in, queries.Output{Discard: true})
			}
			cpu0 := cpuTime()
			start := time.Now()
			if err := p.Run(cmd.Context()); err != nil {
				return err
			}
			wall := time.Since(start)
			cpu := cpuTime() - cpu0
			fmt.Fprintf(stdout, "%s: %d events, parallelism %d, %v wall, %v CPU: %.0f events/s, %.0f events per CPU-second\n",
				label, c.NumEvents, parallelism, wall.Round(time.Millisecond), cpu.Round(time.Millisecond),
				float64(c.NumEvents)/wall.Seconds(), float64(c.NumEvents)/cpu.Seconds())
			return nil
		},
	}
	nx.Flags().StringVarP(&query, "query", "q", "q0", "the query")
	nx.Flags().BoolVar(&fromSQL, "sql", false, "run the query's published Flink SQL instead of the Go-API query")
	nx.Flags().IntVarP(&parallelism, "parallelism", "p", runtime.GOMAXPROCS(0), "subtasks per operator")
	f.Define(nx.Flags())
	ft.define(nx.Flags())
	cmd.AddCommand(nx, benchLatencyCommand(stdout))
	return cmd
}

// buildSQL adds Nexmark query q, from its published SQL, over the events
// of c to p.
func buildSQL(p *weir.Pipeline, q string, c nexmark.Config) error {
	text, vars, err := queries.SQLScript(q, c)
	if err != nil {
		return usageError{err}
	}
	s, err := sql.Parse(text, sql.Options{Vars: vars})
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return s.Build(p)
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func connectorInfo() connector.SubtaskInfo {
	return connector.SubtaskInfo{Operator: "generate", Subtask: 0, Parallelism: 1}
}
