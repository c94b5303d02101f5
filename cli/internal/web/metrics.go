// Package web serves a running job's metrics in the Prometheus format and
// its state through a versioned JSON API. Everything is read from the
// job's counters at request time, so serving costs nothing while nobody
// asks.
package web

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weir-stream/weir"
	"github.com/weir-stream/weir/internal/state/lsm"
)

// Job is what the server needs of a job; *weir.Pipeline implements it.
type Job interface {
	Name() string
	Status() weir.JobStatus
	Metrics() []weir.TaskMetrics
	Report() *weir.Report
	Explain() (string, error)
}

// collector exposes jobs' counters as Prometheus metrics.
type collector struct {
	jobs func() []Job
	now  func() time.Time
	// worker labels each subtask's metrics with the worker that runs it
	// (SubtaskMetrics.Worker): a cluster's jobs.
	worker bool
}

func (c *collector) task() *taskDescs {
	if c.worker {
		return clusterTask
	}
	return localTask
}

// taskDescs describe the metrics of a subtask under one set of labels:
// job, task and subtask, and on a cluster worker (the worker that runs
// the subtask).
type taskDescs struct {
	recordsIn, recordsOut, bytesOut, written, watermark, lag, queue, idle, backpress, busy, latency, eventLat,
	restarts, takeovers, standbyLag, duplicates, retained, lateDropped, sbRetained *prometheus.Desc
}

func newTaskDescs(labels ...string) *taskDescs {
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, labels, nil) }
	return &taskDescs{
		recordsIn:   d("weir_task_records_in_total", "Records a subtask received (sources: read)."),
		recordsOut:  d("weir_task_records_out_total", "Records a subtask sent to other tasks."),
		bytesOut:    d("weir_task_bytes_out_total", "Encoded bytes a subtask sent to other tasks."),
		written:     d("weir_sink_records_written_total", "Records a subtask's sink wrote."),
		watermark:   d("weir_task_watermark_milliseconds", "A subtask's input watermark, epoch milliseconds."),
		lag:         d("weir_task_watermark_lag_seconds", "Wall-clock time minus a subtask's input watermark."),
		queue:       d("weir_task_input_queue_fill_ratio", "How full a subtask's input queues are (1: its senders are backpressured)."),
		idle:        d("weir_task_idle_seconds_total", "Time a subtask waited for input."),
		backpress:   d("weir_task_backpressured_seconds_total", "Time a subtask waited for room in its receivers' queues."),
		busy:        d("weir_task_busy_seconds_total", "Time a subtask neither idle nor backpressured."),
		latency:     d("weir_task_latency_seconds", "Age of latency markers when they reach a subtask (queueing and processing delay since the source)."),
		eventLat:    d("weir_sink_event_time_latency_seconds", "Wall-clock time minus the event time of records a sink wrote."),
		restarts:    d("weir_task_restarts_total", "Restarts of a subtask on its own (fine-grained failover)."),
		takeovers:   d("weir_task_takeovers_total", "Failures of a subtask its active standby took over."),
		standbyLag:  d("weir_task_standby_lag_elements", "Input elements a subtask's active standby has yet to apply."),
		duplicates:  d("weir_task_duplicates_dropped_total", "Records a subtask received again from a restarted sender and dropped by sequence number."),
		retained:    d("weir_task_retained_bytes", "Output a subtask keeps for replay to a restarted consumer (upstream backup)."),
		lateDropped: d("weir_late_records_dropped_total", "Records a subtask's window operators dropped as too late for every window, for want of a late side output."),
		sbRetained:  d("weir_task_standby_retained_bytes", "Output a subtask's active standby keeps for replay after a takeover."),
	}
}

func (d *taskDescs) all() []*prometheus.Desc {
	return []*prometheus.Desc{d.recordsIn, d.recordsOut, d.bytesOut, d.written, d.watermark, d.lag, d.queue, d.idle, d.backpress, d.busy,
		d.latency, d.eventLat, d.restarts, d.takeovers, d.standbyLag, d.duplicates, d.retained, d.lateDropped, d.sbRetained}
}

var (
	// localTask labels a process's subtasks, clusterTask a cluster's,
	// with the worker that runs each too.
	localTask   = newTaskDescs("job", "task", "subtask")
	clusterTask = newTaskDescs("job", "task", "subtask", "worker")

	descCkpts     = prometheus.NewDesc("weir_checkpoints_total", "Checkpoints that ended, by status.", []string{"job", "status"}, nil)
	descCkptDur   = prometheus.NewDesc("weir_checkpoint_last_duration_seconds", "Duration of the latest completed checkpoint.", []string{"job"}, nil)
	descCkptSize  = prometheus.NewDesc("weir_checkpoint_last_size_bytes", "State size of the latest completed checkpoint.", []string{"job"}, nil)
	descCkptAlign = prometheus.NewDesc("weir_checkpoint_last_alignment_seconds", "Longest barrier alignment of the latest completed checkpoint.", []string{"job"}, nil)
	descRestarts  = prometheus.NewDesc("weir_job_restarts_total", "Failures the job recovered from.", []string{"job"}, nil)
	descRecovery  = prometheus.NewDesc("weir_job_last_recovery_seconds", "Time from the latest failure to the first record written after it.", []string{"job"}, nil)
	descUp        = prometheus.NewDesc("weir_job_running", "1 while the job runs.", []string{"job"}, nil)
)

// histogram converts a weir histogram to a constant Prometheus one.
func histogram(d *prometheus.Desc, h weir.Histogram, labels []string) (prometheus.Metric, bool) {
	if h.Count() == 0 {
		return nil, false
	}
	buckets := map[float64]uint64{}
	var cum uint64
	for i, b := range weir.LatencyBuckets {
		cum += uint64(h.Counts[i])
		buckets[b.Seconds()] = cum
	}
	return prometheus.MustNewConstHistogram(d, uint64(h.Count()), h.Sum.Seconds(), buckets, labels...), true
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range append(c.task().all(), descStateCache, descStateCacheMax, descStateMem, descStateDisk, descStateStores,
		descCkpts, descCkptDur, descCkptSize, descCkptAlign, descRestarts, descRecovery, descUp) {
		ch <- d
	}
}

// State backend metrics: the pebble backend's memory outside the Go heap
// (its block cache and memtables; go_memstats_heap_alloc_bytes is the
// heap) and its disk, over every store of the process.
var (
	descStateCache    = prometheus.NewDesc("weir_state_block_cache_bytes", "Bytes in the block cache the pebble state backend's stores share.", nil, nil)
	descStateCacheMax = prometheus.NewDesc("weir_state_block_cache_capacity_bytes", "Capacity of the pebble state backend's block cache.", nil, nil)
	descStateMem      = prometheus.NewDesc("weir_state_memtable_bytes", "Bytes of memtables of the pebble state backend's stores.", nil, nil)
	descStateDisk     = prometheus.NewDesc("weir_state_disk_bytes", "Bytes of files of the pebble state backend's stores on local disk.", nil, nil)
	descStateStores   = prometheus.NewDesc("weir_state_stores", "Open stores of the pebble state backend.", nil, nil)
)

func collectState(ch chan<- prometheus.Metric) {
	env := lsm.CurrentEnv()
	if env == nil {
		return
	}
	m := env.Metrics()
	ch <- prometheus.MustNewConstMetric(descStateCache, prometheus.GaugeValue, float64(m.BlockCache))
	ch <- prometheus.MustNewConstMetric(descStateCacheMax, prometheus.GaugeValue, float64(m.BlockCacheMax))
	ch <- prometheus.MustNewConstMetric(descStateMem, prometheus.GaugeValue, float64(m.MemTables))
	ch <- prometheus.MustNewConstMetric(descStateDisk, prometheus.GaugeValue, float64(m.DiskBytes))
	ch <- prometheus.MustNewConstMetric(descStateStores, prometheus.GaugeValue, float64(m.Stores))
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	now := c.now()
	collectState(ch)
	for _, j := range c.jobs() {
		name := j.Name()
		running := 0.0
		if j.Status().State == "running" {
			running = 1
		}
		ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, running, name)
		for _, t := range j.Metrics() {
			for i, sub := range t.Subtasks {
				l := []string{name, t.Name, strconv.Itoa(i)}
				if c.worker {
					l = append(l, sub.Worker)
				}
				c.collectSubtask(ch, t.Sink, sub, l, now)
			}
		}
		r := j.Report()
		if r == nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descCkpts, prometheus.CounterValue, float64(r.Completed), name, "completed")
		ch <- prometheus.MustNewConstMetric(descCkpts, prometheus.CounterValue, float64(r.Aborted), name, "aborted")
		if last := r.LastCompletedCheckpoint; last != nil {
			ch <- prometheus.MustNewConstMetric(descCkptDur, prometheus.GaugeValue, last.Duration.Seconds(), name)
			ch <- prometheus.MustNewConstMetric(descCkptSize, prometheus.GaugeValue, float64(last.Size), name)
			ch <- prometheus.MustNewConstMetric(descCkptAlign, prometheus.GaugeValue, last.Alignment.Seconds(), name)
		}
		ch <- prometheus.MustNewConstMetric(descRestarts, prometheus.CounterValue, float64(len(r.Recoveries)), name)
		if n := len(r.Recoveries); n > 0 {
			ch <- prometheus.MustNewConstMetric(descRecovery, prometheus.GaugeValue, r.Recoveries[n-1].Duration.Seconds(), name)
		}
	}
}

// collectSubtask sends the metrics of subtask s, labelled l.
func (c *collector) collectSubtask(ch chan<- prometheus.Metric, sink bool, s weir.SubtaskMetrics, l []string, now time.Time) {
	d := c.task()
	ch <- prometheus.MustNewConstMetric(d.recordsIn, prometheus.CounterValue, float64(s.RecordsIn), l...)
	ch <- prometheus.MustNewConstMetric(d.recordsOut, prometheus.CounterValue, float64(s.RecordsOut), l...)
	ch <- prometheus.MustNewConstMetric(d.bytesOut, prometheus.CounterValue, float64(s.BytesOut), l...)
	if sink {
		ch <- prometheus.MustNewConstMetric(d.written, prometheus.CounterValue, float64(s.RecordsWritten), l...)
	}
	ch <- prometheus.MustNewConstMetric(d.queue, prometheus.GaugeValue, s.QueueFill, l...)
	ch <- prometheus.MustNewConstMetric(d.idle, prometheus.CounterValue, s.Idle.Seconds(), l...)
	ch <- prometheus.MustNewConstMetric(d.backpress, prometheus.CounterValue, s.Backpressured.Seconds(), l...)
	ch <- prometheus.MustNewConstMetric(d.busy, prometheus.CounterValue, s.Busy.Seconds(), l...)
	ch <- prometheus.MustNewConstMetric(d.restarts, prometheus.CounterValue, float64(s.Restarts), l...)
	ch <- prometheus.MustNewConstMetric(d.takeovers, prometheus.CounterValue, float64(s.Takeovers), l...)
	if s.Standby {
		ch <- prometheus.MustNewConstMetric(d.standbyLag, prometheus.GaugeValue, float64(s.StandbyLag), l...)
		ch <- prometheus.MustNewConstMetric(d.sbRetained, prometheus.GaugeValue, float64(s.StandbyRetainedBytes), l...)
	}
	ch <- prometheus.MustNewConstMetric(d.duplicates, prometheus.CounterValue, float64(s.Duplicates), l...)
	ch <- prometheus.MustNewConstMetric(d.lateDropped, prometheus.CounterValue, float64(s.LateDropped), l...)
	ch <- prometheus.MustNewConstMetric(d.retained, prometheus.GaugeValue, float64(s.RetainedBytes), l...)
	if m, ok := histogram(d.latency, s.Latency, l); ok {
		ch <- m
	}
	if m, ok := histogram(d.eventLat, s.EventTimeLatency, l); ok {
		ch <- m
	}
	if s.Watermark != weir.MinWatermark && s.Watermark != weir.EndOfTime {
		ch <- prometheus.MustNewConstMetric(d.watermark, prometheus.GaugeValue, float64(s.Watermark), l...)
		lag := now.Sub(time.UnixMilli(s.Watermark)).Seconds()
		ch <- prometheus.MustNewConstMetric(d.lag, prometheus.GaugeValue, lag, l...)
	}
}
