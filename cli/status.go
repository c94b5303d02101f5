package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/cluster/pb"
)

func init() { AddCommand(statusCommand) }

// statusCommand shows in the terminal what the JSON API of a running job
// serves: `weir run ... --http ADDR` in one terminal, `weir status --http
// ADDR` in another.
func statusCommand(stdout, _ io.Writer) *cobra.Command {
	var addr string
	var c client
	cmd := &cobra.Command{
		Use:   "status [JOB]",
		Short: "Show the state, tasks, checkpoints, recoveries and rescales of a running job",
		Long: `Query the JSON API of a job started with --http and print its state, its
tasks with their counters, watermarks and input queue fill, its checkpoints,
its recoveries and its live rescales (weir rescale --http). Without JOB, list the jobs. With --coordinator, or with
$WEIR_COORDINATOR set and no --http, ask a cluster's coordinator instead:
the job's state, where its subtasks run, its checkpoints and recoveries.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if askCoordinator(cmd) {
				if len(args) == 0 {
					return listClusterJobs(cmd.Context(), &c, stdout)
				}
				return c.call(cmd.Context(), func(ctx context.Context, cc pb.CoordinatorClient) error {
					info, err := cc.GetJob(ctx, &pb.GetJobRequest{Id: args[0]})
					if err == nil {
						printClusterJob(stdout, info)
					}
					return err
				})
			}
			base := addr
			if !strings.Contains(base, "://") {
				base = "http://" + base
			}
			var jobs []struct {
				Name string `json:"name"`
				weir.JobStatus
			}
			if err := getJSON(base+"/api/v1/jobs", &jobs); err != nil {
				return err
			}
			if len(args) == 0 {
				for _, j := range jobs {
					fmt.Fprintf(stdout, "%-20s %-10s %s, %s failover%s\n", j.Name, j.State, j.Guarantee, j.Failover, standbyNote(j.Standby))
				}
				return nil
			}
			name := args[0]
			for _, j := range jobs {
				if j.Name == name {
					fmt.Fprintf(stdout, "job %s: %s, %s, %s failover%s, started %s\n", j.Name, j.State, j.Guarantee, j.Failover, standbyNote(j.Standby), j.Started.Format(time.RFC3339))
					if j.Error != "" {
						fmt.Fprintf(stdout, "  error: %s\n", j.Error)
					}
				}
			}
			var tasks []weir.TaskMetrics
			if err := getJSON(base+"/api/v1/jobs/"+name+"/tasks", &tasks); err != nil {
				return err
			}
			for _, t := range tasks {
				late := ""
				if t.LateDropped > 0 {
					late = fmt.Sprintf(" late dropped %d", t.LateDropped)
				}
				fmt.Fprintf(stdout, "task %-40s p=%d in %d out %d written %d watermark %s%s\n", t.Name, t.Parallelism,
					t.RecordsIn, t.RecordsOut, t.RecordsWritten, formatWatermark(t.Watermark), late)
				for i, s := range t.Subtasks {
					fmt.Fprintf(stdout, "  subtask %d: in %d, watermark %s, input queue %.0f%% full", i, s.RecordsIn, formatWatermark(s.Watermark), 100*s.QueueFill)
					if s.WatermarkHeldBackBy != "" {
						fmt.Fprintf(stdout, ", watermark held back by %s", s.WatermarkHeldBackBy)
					}
					if s.Restarts > 0 {
						fmt.Fprintf(stdout, ", restarted alone %d times", s.Restarts)
					}
					if s.Takeovers > 0 {
						fmt.Fprintf(stdout, ", taken over by its standby %d times", s.Takeovers)
					}
					if s.Standby {
						fmt.Fprintf(stdout, ", standby %d elements behind", s.StandbyLag)
					}
					fmt.Fprintln(stdout)
				}
			}
			var cks []weir.CheckpointStats
			if err := getJSON(base+"/api/v1/jobs/"+name+"/checkpoints", &cks); err != nil {
				return err
			}
			for _, c := range cks[max(0, len(cks)-5):] {
				fmt.Fprintf(stdout, "checkpoint %d %s in %v, %s\n", c.ID, c.Status, c.Duration.Round(time.Microsecond), bytes(c.Size))
			}
			var recs []weir.Recovery
			if err := getJSON(base+"/api/v1/jobs/"+name+"/recoveries", &recs); err != nil {
				return err
			}
			for i, r := range recs {
				if r.Takeover {
					fmt.Fprintf(stdout, "recovery %d: taken over by an active standby in %v after %s\n", i+1, r.Duration, r.Cause)
					continue
				}
				fmt.Fprintf(stdout, "recovery %d: restored %d after %s\n", i+1, r.Restored, r.Cause)
			}
			var changes struct {
				Rescales []weir.Rescale `json:"rescales"`
			}
			if err := getJSON(base+"/api/v1/jobs/"+name+"/changes", &changes); err != nil {
				return err
			}
			for i, r := range changes.Rescales {
				fmt.Fprintf(stdout, "rescale %d: %s\n", i+1, describeRescale(r))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "http", "127.0.0.1:8081", "address the job serves its API on (weir run --http)")
	c.define(cmd.Flags())
	return cmd
}

// askCoordinator reports whether status asks a cluster's coordinator
// rather than a job's --http API: when --coordinator is given, or when
// $WEIR_COORDINATOR is set and --http is not given.
func askCoordinator(cmd *cobra.Command) bool {
	fs := cmd.Flags()
	return fs.Changed("coordinator") || os.Getenv("WEIR_COORDINATOR") != "" && !fs.Changed("http")
}

func getJSON(url string, v any) error {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return fmt.Errorf("status: %w (is the job running with --http?)", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("status: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// standbyNote names a job's standbys for a status line.
func standbyNote(standby string) string {
	if standby == "" {
		return ""
	}
	return ", " + standby + " standby"
}
