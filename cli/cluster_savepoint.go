package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/cli/internal/web"
	"github.com/weir-stream/weir/internal/cluster/pb"
)

func init() {
	AddCommand(savepointCommand)
	AddCommand(stopCommand)
}

// savepointTimeout bounds the wait for a savepoint: its checkpoint, the
// copy of its state and, for a stop, the sinks' commits.
const savepointTimeout = 10 * time.Minute

// savepointCommand is weir savepoint: of a job on a cluster (JOB, asked
// of its coordinator) or of the job weir run serves --http for.
func savepointCommand(stdout, stderr io.Writer) *cobra.Command {
	var c client
	var addr, dir string
	cmd := &cobra.Command{
		Use:   "savepoint [JOB] [--coordinator ADDR | --http ADDR] [--dir DIR]",
		Short: "Take a savepoint of a running job",
		Long: `Take a savepoint of a running job and print its path once it is written: a
checkpoint taken at once, copied into a directory of its own under --dir that
no retention deletes (docs/savepoints.md).

With JOB (the id weir submit printed), ask the cluster's coordinator
(--coordinator); --dir defaults to the coordinator's --savepoint-dir, and
weir submit JOB --from-savepoint PATH starts a job from the savepoint.

Without JOB, ask the job that weir run serves its API for (--http ADDR);
--dir defaults to the job's --savepoint-dir, and weir run JOB --restore PATH
starts from the savepoint. A running job also takes one into its
--savepoint-dir on SIGUSR1.

Either restores also into a changed job or at another parallelism.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				return clusterSavepoint(cmd.Context(), &c, &pb.SavepointRequest{Id: args[0], Dir: dir}, stdout)
			}
			return printSavepoint(cmd.Context(), addr, web.SavepointRequest{Dir: dir}, stdout, stderr)
		},
	}
	savepointClientFlags(cmd, &addr, &dir)
	c.define(cmd.Flags())
	return cmd
}

// stopCommand is weir stop: stop a job after a savepoint, on a cluster
// (JOB) or the one weir run serves --http for.
func stopCommand(stdout, stderr io.Writer) *cobra.Command {
	var c client
	var addr, dir string
	var savepoint, drain bool
	cmd := &cobra.Command{
		Use:   "stop [JOB] --savepoint [--drain] [--coordinator ADDR | --http ADDR] [--dir DIR]",
		Short: "Stop a running job after a savepoint",
		Long: `Stop a running job gracefully: take a savepoint as weir savepoint does, let
every sink commit the output up to it, and end the job. A transactional
sink's output (the file sink's) then ends exactly at the savepoint, and a run
restored from it continues the output without a gap or a duplicate. The
savepoint's path is printed on standard output.

With JOB (the id weir submit printed), the cluster's coordinator stops it
(weir status then says "stopped"; weir submit JOB --from-savepoint PATH
continues it). Without JOB, the job weir run serves --http for stops and
weir run exits 0 (weir run JOB --restore PATH continues it).

With --drain (Flink's stop --drain) the sources emit the final watermark
right before the savepoint's barrier: every event-time window and timer
fires, and its output is part of what the sinks commit with the savepoint.
Use it to end a job for good: a run restored from a drained savepoint takes
every later record as late. Without --drain, windows still open stay in the
savepoint and fire in the run restored from it.

Like flink stop, weir stop always takes a savepoint; --savepoint says so. To
end a job without one, use weir cancel on a cluster, or interrupt weir run
(Ctrl-C or SIGTERM): it resumes from its last checkpoint with --restore latest.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !savepoint {
				return usagef("stop: weir stop takes a savepoint and then stops the job: give --savepoint (and --dir DIR unless a default savepoint directory is set); to end a job without a savepoint, use weir cancel on a cluster or interrupt weir run (Ctrl-C or SIGTERM)")
			}
			if len(args) == 1 {
				return clusterSavepoint(cmd.Context(), &c, &pb.SavepointRequest{Id: args[0], Dir: dir, Stop: true, Drain: drain}, stdout)
			}
			return printSavepoint(cmd.Context(), addr, web.SavepointRequest{Dir: dir, Stop: true, Drain: drain}, stdout, stderr)
		},
	}
	savepointClientFlags(cmd, &addr, &dir)
	c.define(cmd.Flags())
	cmd.Flags().BoolVar(&savepoint, "savepoint", false, "take a savepoint before stopping (required: weir stop always takes one)")
	cmd.Flags().BoolVar(&drain, "drain", false, "emit the final watermark before the savepoint, firing every event-time window and timer into it: for ending a job for good")
	return cmd
}

// refusal is the coordinator's error err as its message alone: its
// refusals say what to do, and the gRPC code adds nothing for a person.
func refusal(err error) error {
	if s, ok := status.FromError(err); ok && err != nil {
		return errors.New(s.Message())
	}
	return err
}

// clusterSavepoint asks the coordinator for the savepoint req and prints
// its path. The coordinator's refusals (an unknown job, one not
// running, one without checkpoints, no directory) are errors with its
// message alone.
func clusterSavepoint(ctx context.Context, c *client, req *pb.SavepointRequest, stdout io.Writer) error {
	var info *pb.SavepointInfo
	err := c.callWithin(ctx, savepointTimeout, func(ctx context.Context, cc pb.CoordinatorClient) (err error) {
		info, err = cc.Savepoint(ctx, req)
		return refusal(err)
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, info.Path)
	return nil
}
