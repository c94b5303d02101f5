// Package cli is weir's command line. A program that registers its own jobs
// with weir.RegisterJob calls Main to get the weir command with those jobs:
//
//	func main() { cli.Main() }
//
// so the same binary runs a job locally (`run`) and, later, as every
// process of a cluster.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// ExitUsage is the exit status for bad command lines.
const ExitUsage = 2

// Main runs the command line with os.Args and exits. SIGINT and SIGTERM
// cancel a running job.
func Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Run runs the command line with args and returns the exit status: 0 on
// success, 1 when a job fails, ExitUsage for a bad command line.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := Command(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "weir: %v\n", err)
	var u usageError
	if errors.As(err, &u) || isFlagError(err) {
		return ExitUsage
	}
	return 1
}

// usageError marks errors in the command line itself.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

type flagError struct{ error }

func isFlagError(err error) bool {
	var f flagError
	return errors.As(err, &f)
}

// Command returns the root command, writing to stdout and stderr.
func Command(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "weir",
		Short:         "weir runs stream processing jobs with exactly-once state",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return flagError{fmt.Errorf("%s: %w (see %s --help)", c.CommandPath(), err, c.CommandPath())}
	})
	root.AddCommand(runCommand(stdout, stderr))
	for _, c := range extraCommands {
		root.AddCommand(c(stdout, stderr))
	}
	return root
}

// extraCommands are added by other files of the package (and by
// AddCommand).
var extraCommands []func(stdout, stderr io.Writer) *cobra.Command

// AddCommand adds a subcommand to every root command built afterwards. It
// is meant for init functions.
func AddCommand(c func(stdout, stderr io.Writer) *cobra.Command) {
	extraCommands = append(extraCommands, c)
}
