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
}

var (
	taskLabels      = []string{"job", "task", "subtask"}
	descRecordsIn   = prometheus.NewDesc("weir_task_records_in_total", "Records a subtask received (sources: read).", taskLabels, nil)
	descRecordsOut  = prometheus.NewDesc("weir_task_records_out_total", "Records a subtask sent to other tasks.", taskLabels, nil)
	descBytesOut    = prometheus.NewDesc("weir_task_bytes_out_total", "Encoded bytes a subtask sent to other tasks.", taskLabels, nil)
	descWritten     = prometheus.NewDesc("weir_sink_records_written_total", "Records a subtask's sink wrote.", taskLabels, nil)
	descWatermark   = prometheus.NewDesc("weir_task_watermark_milliseconds", "A subtask's input watermark, epoch milliseconds.", taskLabels, nil)
	descLag         = prometheus.NewDesc("weir_task_watermark_lag_seconds", "Wall-clock time minus a subtask's input watermark.", taskLabels, nil)
	descQueue       = prometheus.NewDesc("weir_task_input_queue_fill_ratio", "How full a subtask's input queues are (1: its senders are backpressured).", taskLabels, nil)
	descCkpts       = prometheus.NewDesc("weir_checkpoints_total", "Checkpoints that ended, by status.", []string{"job", "status"}, nil)
	descCkptDur     = prometheus.NewDesc("weir_checkpoint_last_duration_seconds", "Duration of the latest completed checkpoint.", []string{"job"}, nil)
	descCkptSize    = prometheus.NewDesc("weir_checkpoint_last_size_bytes", "State size of the latest completed checkpoint.", []string{"job"}, nil)
	descCkptAlign   = prometheus.NewDesc("weir_checkpoint_last_alignment_seconds", "Longest barrier alignment of the latest completed checkpoint.", []string{"job"}, nil)
	descRestarts    = prometheus.NewDesc("weir_job_restarts_total", "Failures the job recovered from.", []string{"job"}, nil)
	descRecovery    = prometheus.NewDesc("weir_job_last_recovery_seconds", "Time from the latest failure to the first record written after it.", []string{"job"}, nil)
	descUp          = prometheus.NewDesc("weir_job_running", "1 while the job runs.", []string{"job"}, nil)
	descIdle        = prometheus.NewDesc("weir_task_idle_seconds_total", "Time a subtask waited for input.", taskLabels, nil)
	descBackpress   = prometheus.NewDesc("weir_task_backpressured_seconds_total", "Time a subtask waited for room in its receivers' queues.", taskLabels, nil)
	descBusy        = prometheus.NewDesc("weir_task_busy_seconds_total", "Time a subtask neither idle nor backpressured.", taskLabels, nil)
	descLatency     = prometheus.NewDesc("weir_task_latency_seconds", "Age of latency markers when they reach a subtask (queueing and processing delay since the source).", taskLabels, nil)
	descEventLat    = prometheus.NewDesc("weir_sink_event_time_latency_seconds", "Wall-clock time minus the event time of records a sink wrote.", taskLabels, nil)
	descTaskRestart = prometheus.NewDesc("weir_task_restarts_total", "Restarts of a subtask on its own (fine-grained failover).", taskLabels, nil)
	descTakeover    = prometheus.NewDesc("weir_task_takeovers_total", "Failures of a subtask its active standby took over.", taskLabels, nil)
	descStandbyLag  = prometheus.NewDesc("weir_task_standby_lag_elements", "Input elements a subtask's active standby has yet to apply.", taskLabels, nil)
	descDuplicates  = prometheus.NewDesc("weir_task_duplicates_dropped_total", "Records a subtask received again from a restarted sender and dropped by sequence number.", taskLabels, nil)
	descRetained    = prometheus.NewDesc("weir_task_retained_bytes", "Output a subtask keeps for replay to a restarted consumer (upstream backup).", taskLabels, nil)
	descLateDropped = prometheus.NewDesc("weir_late_records_dropped_total", "Records a subtask's window operators dropped as too late for every window, for want of a late side output.", taskLabels, nil)
	descSbRetained  = prometheus.NewDesc("weir_task_standby_retained_bytes", "Output a subtask's active standby keeps for replay after a takeover.", taskLabels, nil)
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
	for _, d := range []*prometheus.Desc{descStateCache, descStateCacheMax, descStateMem, descStateDisk, descStateStores, descRecordsIn, descRecordsOut, descBytesOut, descWritten, descWatermark, descLag,
		descQueue, descCkpts, descCkptDur, descCkptSize, descCkptAlign, descRestarts, descRecovery, descUp, descLatency, descEventLat, descIdle, descBackpress, descBusy,
		descTaskRestart, descTakeover, descStandbyLag, descDuplicates, descRetained, descSbRetained, descLateDropped} {
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
			for i, s := range t.Subtasks {
				l := []string{name, t.Name, strconv.Itoa(i)}
				ch <- prometheus.MustNewConstMetric(descRecordsIn, prometheus.CounterValue, float64(s.RecordsIn), l...)
				ch <- prometheus.MustNewConstMetric(descRecordsOut, prometheus.CounterValue, float64(s.RecordsOut), l...)
				ch <- prometheus.MustNewConstMetric(descBytesOut, prometheus.CounterValue, float64(s.BytesOut), l...)
				if t.Sink {
					ch <- prometheus.MustNewConstMetric(descWritten, prometheus.CounterValue, float64(s.RecordsWritten), l...)
				}
				ch <- prometheus.MustNewConstMetric(descQueue, prometheus.GaugeValue, s.QueueFill, l...)
				ch <- prometheus.MustNewConstMetric(descIdle, prometheus.CounterValue, s.Idle.Seconds(), l...)
				ch <- prometheus.MustNewConstMetric(descBackpress, prometheus.CounterValue, s.Backpressured.Seconds(), l...)
				ch <- prometheus.MustNewConstMetric(descBusy, prometheus.CounterValue, s.Busy.Seconds(), l...)
				ch <- prometheus.MustNewConstMetric(descTaskRestart, prometheus.CounterValue, float64(s.Restarts), l...)
				ch <- prometheus.MustNewConstMetric(descTakeover, prometheus.CounterValue, float64(s.Takeovers), l...)
				if s.Standby {
					ch <- prometheus.MustNewConstMetric(descStandbyLag, prometheus.GaugeValue, float64(s.StandbyLag), l...)
					ch <- prometheus.MustNewConstMetric(descSbRetained, prometheus.GaugeValue, float64(s.StandbyRetainedBytes), l...)
				}
				ch <- prometheus.MustNewConstMetric(descDuplicates, prometheus.CounterValue, float64(s.Duplicates), l...)
				ch <- prometheus.MustNewConstMetric(descLateDropped, prometheus.CounterValue, float64(s.LateDropped), l...)
				ch <- prometheus.MustNewConstMetric(descRetained, prometheus.GaugeValue, float64(s.RetainedBytes), l...)
				if m, ok := histogram(descLatency, s.Latency, l); ok {
					ch <- m
				}
				if m, ok := histogram(descEventLat, s.EventTimeLatency, l); ok {
					ch <- m
				}
				if s.Watermark != weir.MinWatermark && s.Watermark != weir.EndOfTime {
					ch <- prometheus.MustNewConstMetric(descWatermark, prometheus.GaugeValue, float64(s.Watermark), l...)
					lag := now.Sub(time.UnixMilli(s.Watermark)).Seconds()
					ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, lag, l...)
				}
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
