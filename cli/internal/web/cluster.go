package web

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weir-stream/weir/internal/cluster"
)

// NewClusterServer returns a server for the jobs of a cluster: jobs gives
// them at each request (a coordinator's jobs come and go), the metrics
// of their subtasks carry the label worker (SubtaskMetrics.Worker), and
// stats, if not nil, gives the coordinator's own figures for /metrics.
func NewClusterServer(jobs func() []Job, stats func() cluster.Stats) *Server {
	var extra []prometheus.Collector
	if stats != nil {
		extra = append(extra, coordinatorCollector{stats})
	}
	return newServer(nil, jobs, &collector{now: time.Now, worker: true}, extra...)
}

var (
	descWorkers   = prometheus.NewDesc("weir_coordinator_workers", "Workers connected to the coordinator (passive standbys included).", nil, nil)
	descStandbys  = prometheus.NewDesc("weir_coordinator_standby_workers", "Connected workers that are passive standbys.", nil, nil)
	descSlots     = prometheus.NewDesc("weir_coordinator_slots", "Slots of the connected workers.", nil, nil)
	descSlotsUsed = prometheus.NewDesc("weir_coordinator_slots_used", "Slots of the connected workers that jobs' attempts take.", nil, nil)
	descEpoch     = prometheus.NewDesc("weir_coordinator_epoch", "The coordinator's leadership epoch in its store.", nil, nil)
	descLeading   = prometheus.NewDesc("weir_coordinator_leading", "1 while the coordinator leads its store; 0 while it is a standby (--ha) and once it was superseded or handed over.", nil, nil)
	descJobs      = prometheus.NewDesc("weir_coordinator_jobs", "The coordinator's jobs, by state.", []string{"state"}, nil)
)

// coordinatorCollector exposes a coordinator's figures.
type coordinatorCollector struct{ stats func() cluster.Stats }

func (coordinatorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descWorkers, descStandbys, descSlots, descSlotsUsed, descEpoch, descLeading, descJobs} {
		ch <- d
	}
}

func (c coordinatorCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descWorkers, float64(s.Workers))
	gauge(descStandbys, float64(s.PassiveStandbys))
	gauge(descSlots, float64(s.Slots))
	gauge(descSlotsUsed, float64(s.SlotsUsed))
	gauge(descEpoch, float64(s.Epoch))
	leading := 0.0
	if s.Leading {
		leading = 1
	}
	gauge(descLeading, leading)
	for state, n := range s.Jobs {
		gauge(descJobs, float64(n), state)
	}
}
