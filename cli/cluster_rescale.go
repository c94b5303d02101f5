package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-stream/weir/internal/cluster/pb"
)

func init() { AddCommand(rescaleCommand) }

// rescaleTimeout bounds the wait for a rescale: the stop's checkpoint,
// the sinks' commits and the start of the next run.
const rescaleTimeout = 10 * time.Minute

// rescaleCommand is weir rescale: change the parallelism of a job
// running on a cluster (JOB, asked of its coordinator), or live, that of
// operators of the job weir run serves --http for (rescale.go).
func rescaleCommand(stdout, _ io.Writer) *cobra.Command {
	var c client
	var f rescaleFlags
	cmd := &cobra.Command{
		Use:   "rescale {JOB [--operator NAME[=N]]... --parallelism N [--coordinator ADDR] | --http ADDR --operator NAME[=N]... [--parallelism N]}",
		Short: "Change the parallelism of a running job, or live that of some of its operators",
		Long: `Change the parallelism of a running job.

With JOB (the id weir submit printed), ask the cluster's coordinator
(--coordinator). The coordinator stops the job at a checkpoint, as weir stop
--savepoint does but without copying the checkpoint into a savepoint: the
checkpoint stays in the job's checkpoint store and every sink commits it, so
the output is exactly-once. It then starts the job again under the same id
with --parallelism N, restoring that checkpoint: keyed state moves by key
group, sources' positions are dealt out to the new subtasks. weir status JOB
lists the rescale in the job's report, with the pause from the stop to the
first record written after it.

This is a restart of the whole job at a checkpoint, not a live hand-over of
key groups: the job writes nothing during the pause. A job submitted with
--parallelism auto is pinned at N: it no longer follows the workers. It
drops what live rescales set (--task-parallelism).

With JOB and --operator, the coordinator changes live the parallelism of
those operators' tasks, one after the other, as described below for weir
run's jobs: nothing restarts, the new subtasks run on the workers of the
job's slots and on free ones. The job's arguments then carry the change
(--task-parallelism), so its later runs, and a coordinator that takes it
over, build the changed plan.

The coordinator refuses an unknown job, a job that is not running, a
parallelism outside 1..--max-parallelism or equal to the current one, one
that needs more slots than the job holds and the free ones (it says how many
are free), and a second rescale while one is under way.

Without JOB, ask the job that weir run serves its API for (--http ADDR) to
change live the parallelism of the tasks of the operators --operator names
(by name or uid; weir run JOB --explain shows the tasks, "a -> b" being the
chained operators a and b). Give --operator NAME with --parallelism N, or
--operator NAME=N; repeat --operator to change several tasks at one
checkpoint. Nothing restarts: at the next checkpoint, aligned, the changed
tasks and every task downstream of them take their snapshot and hand over to
new subtasks at the new parallelism, which restore that checkpoint's state
by key group; the sources and the tasks upstream run on, their records after
the checkpoint waiting for the new subtasks. Only that downstream cone
pauses, from the checkpoint's trigger until the new subtasks restored their
state; output stays exactly-once. The command prints the checkpoint, the
subtasks replaced and the pause, and weir status lists the rescale.

Refused, the job left running as it was: a source (its positions move only
at a restart: stop with a savepoint and restore at the new parallelism
instead), a job under --failover fine-grained (upstream backup, active
standbys), a job without checkpoints, a change whose tasks or those
downstream of them have a subtask that finished its input, a task with a
forward edge (whose ends keep one parallelism), a rescale while another or a
savepoint is under way, an unknown operator and a parallelism outside
1..--max-parallelism. Should the rescale's checkpoint abort, the job
restarts from its latest checkpoint at the old parallelism; should the new
subtasks fail once it completed, it restarts from it at the new parallelism
(docs/fault-tolerance.md).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			if len(args) == 0 {
				if fs.Changed("coordinator") {
					return usagef("rescale: name the cluster's job to rescale: weir rescale JOB --parallelism N --coordinator ADDR")
				}
				return httpRescale(cmd.Context(), f, fs.Changed("parallelism"), stdout)
			}
			switch {
			case fs.Changed("http"):
				return usagef("rescale: give JOB for a job on a cluster, or --http for the job weir run serves, not both")
			case len(f.operators) > 0:
				changes, err := f.changes(fs.Changed("parallelism"))
				if err != nil {
					return err
				}
				return clusterRescaleLive(cmd.Context(), &c, args[0], changes, stdout)
			case !fs.Changed("parallelism"):
				return usagef("rescale: give the new parallelism with --parallelism N")
			}
			return clusterRescale(cmd.Context(), &c, args[0], f.parallelism, stdout)
		},
	}
	c.define(cmd.Flags())
	f.define(cmd.Flags())
	return cmd
}

// clusterRescaleLive asks the coordinator to rescale the tasks of job
// id's operators live, one after the other, and prints each outcome.
func clusterRescaleLive(ctx context.Context, c *client, id string, changes map[string]int, stdout io.Writer) error {
	for _, op := range slices.Sorted(maps.Keys(changes)) {
		var info *pb.RescaleInfo
		err := c.callWithin(ctx, rescaleTimeout, func(ctx context.Context, cc pb.CoordinatorClient) (err error) {
			info, err = cc.Rescale(ctx, &pb.RescaleRequest{Id: id, Operator: op, Parallelism: int32(changes[op])})
			return refusal(err)
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "rescaled %q of %s from parallelism %d to %d live at checkpoint %d (%d subtasks replaced, paused %v)\n",
			info.Task, id, info.From, info.To, info.Checkpoint, info.Replaced, time.Duration(info.StopNs).Round(time.Millisecond))
	}
	return nil
}

// clusterRescale asks the coordinator to rescale job id to parallelism
// and prints the outcome.
func clusterRescale(ctx context.Context, c *client, id string, parallelism int, stdout io.Writer) error {
	var info *pb.RescaleInfo
	err := c.callWithin(ctx, rescaleTimeout, func(ctx context.Context, cc pb.CoordinatorClient) (err error) {
		info, err = cc.Rescale(ctx, &pb.RescaleRequest{Id: id, Parallelism: int32(parallelism)})
		return refusal(err)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rescaled %s from parallelism %d to %d at checkpoint %d (stopped and started again in %v)\n",
		id, info.From, info.To, info.Checkpoint, time.Duration(info.StopNs).Round(time.Millisecond))
	return nil
}
