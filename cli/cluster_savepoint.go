package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/status"

	"github.com/weir-stream/weir/internal/cluster/pb"
)

func init() {
	AddCommand(clusterSavepointCommand)
	AddCommand(clusterStopCommand)
}

// savepointTimeout bounds the wait for a savepoint: its checkpoint, the
// copy of its state and, for a stop, the sinks' commits.
const savepointTimeout = 10 * time.Minute

func clusterSavepointCommand(stdout, _ io.Writer) *cobra.Command {
	var c client
	var dir string
	cmd := &cobra.Command{
		Use:   "savepoint JOB [--coordinator ADDR] [--dir DIR]",
		Short: "Write a savepoint of a job running on a cluster",
		Long: `Ask the coordinator for a savepoint of the running job JOB (the id weir submit
printed) and print its path once it is written: a checkpoint taken at once,
copied into a directory of its own under --dir (default the coordinator's
--savepoint-dir) that no retention deletes. weir submit JOB --from-savepoint
PATH starts a job from it, also a changed one or at another parallelism
(docs/savepoints.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return clusterSavepoint(cmd.Context(), &c, &pb.SavepointRequest{Id: args[0], Dir: dir}, stdout)
		},
	}
	c.define(cmd.Flags())
	cmd.Flags().StringVar(&dir, "dir", "", "where the savepoint's directory goes: a directory every process reaches, file:///path or s3://bucket/prefix?endpoint=URL (default: the coordinator's --savepoint-dir)")
	return cmd
}

func clusterStopCommand(stdout, _ io.Writer) *cobra.Command {
	var c client
	var dir string
	var savepoint bool
	cmd := &cobra.Command{
		Use:   "stop JOB --savepoint [--coordinator ADDR] [--dir DIR]",
		Short: "Stop a job running on a cluster after a savepoint",
		Long: `Stop the running job JOB (the id weir submit printed) after a savepoint, as
weir savepoint writes it, and print the savepoint's path. The job stops once
every sink committed the savepoint's checkpoint, so a transactional sink's
output ends exactly at the savepoint and weir submit JOB --from-savepoint PATH
continues it without a gap or a duplicate. weir status then says "stopped".
To end a job without a savepoint, use weir cancel.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !savepoint {
				return usagef("stop: give --savepoint (weir cancel ends a job without one)")
			}
			return clusterSavepoint(cmd.Context(), &c, &pb.SavepointRequest{Id: args[0], Dir: dir, Stop: true}, stdout)
		},
	}
	c.define(cmd.Flags())
	cmd.Flags().BoolVar(&savepoint, "savepoint", false, "stop after a savepoint (required)")
	cmd.Flags().StringVar(&dir, "dir", "", "where the savepoint's directory goes (default: the coordinator's --savepoint-dir)")
	return cmd
}

// clusterSavepoint asks the coordinator for the savepoint req and prints
// its path. The coordinator's refusals (an unknown job, one not
// running, one without checkpoints, no directory) are errors with its
// message alone.
func clusterSavepoint(ctx context.Context, c *client, req *pb.SavepointRequest, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, savepointTimeout)
	defer cancel()
	conn, err := c.sec.Dial(c.addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	info, err := pb.NewCoordinatorClient(conn).Savepoint(ctx, req)
	if err != nil {
		if s, ok := status.FromError(err); ok {
			return fmt.Errorf("coordinator %s: %w", c.addr, errors.New(s.Message()))
		}
		return fmt.Errorf("coordinator %s: %w", c.addr, err)
	}
	fmt.Fprintln(stdout, info.Path)
	return nil
}
