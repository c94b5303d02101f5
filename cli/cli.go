// Package cli is weir's command line. A program that registers its own jobs
// with RegisterJob calls Main to get the weir command with those jobs:
//
//	func main() { cli.Main(cli.WithoutBuiltins()) }
//
// so the same binary runs a job locally (`run`) and, later, as every
// process of a cluster. docs/embedding.md shows a whole program.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weir-stream/weir/internal/state/lsm"
)

// ExitUsage is the exit status for bad command lines.
const ExitUsage = 2

// Main runs the command line with os.Args and exits. SIGINT and SIGTERM
// cancel a running job; a second one ends the process at once. The
// program's name is the binary's unless an option (WithName) sets it.
func Main(opts ...Option) {
	ctx, stop := notifyContext(context.Background())
	code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr, append([]Option{WithName(mainName())}, opts...)...)
	stop()
	lsm.CloseProcessEnv() // the pebble backend's temporary local directory, if it made one
	os.Exit(code)
}

// Run runs the command line with args and returns the exit status: 0 on
// success, 1 when a job fails, ExitUsage for a bad command line, and
// 128 plus the signal's number (ExitInterrupted for SIGINT) when ctx was
// cancelled before the command succeeded. Errors are printed to stderr
// after the program's name ("weir: " unless WithName sets another).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) int {
	s := newSettings(opts)
	root := newCommand(stdout, stderr, s)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "%s: %v\n", s.name, err)
	var u usageError
	switch {
	case errors.As(err, &u) || isFlagError(err):
		return ExitUsage
	case ctx.Err() != nil:
		return interruptedStatus(ctx)
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
func Command(stdout, stderr io.Writer, opts ...Option) *cobra.Command {
	return newCommand(stdout, stderr, newSettings(opts))
}

func newCommand(stdout, stderr io.Writer, s *settings) *cobra.Command {
	root := &cobra.Command{
		Use:           s.name,
		Short:         s.name + " runs stream processing jobs with exactly-once state",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return flagError{fmt.Errorf("%s%w (see %s --help)", commandContext(c), err, c.CommandPath())}
	})
	root.AddCommand(runCommand(stdout, stderr, s))
	for _, c := range extraCommands {
		if s.builtins || !c.builtin {
			root.AddCommand(c.build(stdout, stderr, s))
		}
	}
	checkArgs(root)
	return root
}

// commandContext returns "run keycount: " for the command weir run
// keycount, and "" for weir itself, whose name the error's "weir: " prefix
// already gives.
func commandContext(c *cobra.Command) string {
	if !c.HasParent() {
		return ""
	}
	_, path, _ := strings.Cut(c.CommandPath(), " ")
	return path + ": "
}

// checkArgs makes every wrong argument to c and its subcommands a usage
// error (exit status ExitUsage): an argument a command does not take, and
// an unknown subcommand of a command that only groups others (cobra would
// print the group's help and succeed).
func checkArgs(c *cobra.Command) {
	if c.HasSubCommands() && !c.Runnable() {
		c.Args = cobra.ArbitraryArgs
		c.SuggestionsMinimumDistance = 2
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			hint := ""
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				hint = fmt.Sprintf("; did you mean %q?", s[0])
			}
			return usagef("%sunknown command %q%s (see %s --help)", commandContext(cmd), args[0], hint, cmd.CommandPath())
		}
	}
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				if check(cmd, nil) == nil && check(cmd, args[:1]) != nil {
					return usagef("%stakes no arguments, got %q (see %s --help)", commandContext(cmd), args[0], cmd.CommandPath())
				}
				return usagef("%s%v (see %s --help)", commandContext(cmd), err, cmd.CommandPath())
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		checkArgs(sub)
	}
}

// extraCommands are added by other files of the package (and by
// AddCommand).
var extraCommands []command

// AddCommand adds a subcommand to every root command built afterwards. It
// is meant for init functions.
func AddCommand(c func(stdout, stderr io.Writer) *cobra.Command) {
	extraCommands = append(extraCommands, command{build: func(stdout, stderr io.Writer, _ *settings) *cobra.Command {
		return c(stdout, stderr)
	}})
}

// addCommand adds a subcommand that depends on the command line's
// settings.
func addCommand(c func(stdout, stderr io.Writer, s *settings) *cobra.Command) {
	extraCommands = append(extraCommands, command{build: c})
}

// addBuiltinCommand adds one of weir's benchmark tools, which
// WithoutBuiltins leaves out.
func addBuiltinCommand(c func(stdout, stderr io.Writer) *cobra.Command) {
	AddCommand(c)
	extraCommands[len(extraCommands)-1].builtin = true
}
