package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-stream/weir/internal/cluster/pb"
)

func init() { AddCommand(rescaleCommand) }

// rescaleTimeout bounds the wait for a rescale: the stop's checkpoint,
// the sinks' commits and the start of the next run.
const rescaleTimeout = 10 * time.Minute

// rescaleCommand is weir rescale: change the parallelism of a job running
// on a cluster.
func rescaleCommand(stdout, _ io.Writer) *cobra.Command {
	var c client
	var parallelism int
	cmd := &cobra.Command{
		Use:   "rescale JOB --parallelism N [--coordinator ADDR]",
		Short: "Change the parallelism of a job running on a cluster",
		Long: `Change the parallelism of a job running on a cluster. The coordinator stops the
job at a checkpoint, as weir stop --savepoint does but without copying the
checkpoint into a savepoint: the checkpoint stays in the job's checkpoint
store and every sink commits it, so the output is exactly-once. It then
starts the job again under the same id with --parallelism N, restoring that
checkpoint: keyed state moves by key group, sources' positions are dealt out
to the new subtasks. weir status JOB lists the rescale in the job's report,
with the pause from the stop to the first record written after it.

This is a restart of the whole job at a checkpoint, not a live hand-over of
key groups: the job writes nothing during the pause. The job's flags set one
parallelism for all operators, so there is no per-operator form. A job
submitted with --parallelism auto is pinned at N: it no longer follows the
workers.

The coordinator refuses an unknown job, a job that is not running, a
parallelism outside 1..--max-parallelism or equal to the current one, one
that needs more slots than the job holds and the free ones (it says how many
are free), and a second rescale while one is under way.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("parallelism") {
				return usagef("rescale: give the new parallelism with --parallelism N")
			}
			var info *pb.RescaleInfo
			err := c.callWithin(cmd.Context(), rescaleTimeout, func(ctx context.Context, cc pb.CoordinatorClient) (err error) {
				info, err = cc.Rescale(ctx, &pb.RescaleRequest{Id: args[0], Parallelism: int32(parallelism)})
				return refusal(err)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "rescaled %s from parallelism %d to %d at checkpoint %d (stopped and started again in %v)\n",
				args[0], info.From, info.To, info.Checkpoint, time.Duration(info.StopNs).Round(time.Millisecond))
			return nil
		},
	}
	c.define(cmd.Flags())
	cmd.Flags().IntVarP(&parallelism, "parallelism", "p", 0, "the job's new parallelism")
	return cmd
}
