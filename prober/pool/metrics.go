package pool

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	workersDesc = prometheus.NewDesc("inferprobe_workers",
		"Worker processes configured (--workers, or global.workers in the scenario file).", nil, nil)
	workersUpDesc = prometheus.NewDesc("inferprobe_workers_up",
		"Worker processes running and taking requests: up, and not late with their heartbeat.", nil, nil)
	restartsDesc = prometheus.NewDesc("inferprobe_worker_restarts_total",
		"Worker processes started to replace one that exited, crashed or was killed as stuck.", nil, nil)
	crashLoopingDesc = prometheus.NewDesc("inferprobe_worker_crash_looping",
		"1 while a worker keeps exiting (5 times within a minute) and is restarted only every 10s; see the error log for its last output.", nil, nil)
	cpuDesc = prometheus.NewDesc("inferprobe_worker_cpu_seconds_total",
		"CPU time used by worker processes, user and system, including workers that have exited.", nil, nil)
	schedLatencyDesc = prometheus.NewDesc("inferprobe_worker_sched_latency_p99_seconds",
		"99th percentile of the Go scheduling latency in the worker over its last heartbeat interval (about 0.5s): "+
			"how long its runnable goroutines, and so its timestamps, waited for a CPU.", []string{"worker"}, nil)
	inFlightDesc = prometheus.NewDesc("inferprobe_worker_in_flight_requests",
		"Requests given to the worker and not yet returned, queued ones included.", []string{"worker"}, nil)
)

// Describe implements prometheus.Collector.
func (p *Pool) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{workersDesc, workersUpDesc, restartsDesc, crashLoopingDesc, cpuDesc, schedLatencyDesc, inFlightDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (p *Pool) Collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	defer p.mu.Unlock()
	up, crashLooping, cpu := 0, 0, p.exitedCPU
	for _, s := range p.slots {
		label := strconv.Itoa(s.index)
		calls := 0
		if w := s.current; w != nil {
			if !w.late.Load() {
				up++
			}
			st := w.stats()
			calls = st.calls
			cpu += st.heartbeat.CPU
			if st.beaten {
				ch <- prometheus.MustNewConstMetric(schedLatencyDesc, prometheus.GaugeValue, st.heartbeat.SchedLatencyP99.Seconds(), label)
			}
		}
		if s.crashLooping {
			crashLooping = 1
		}
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(calls), label)
	}
	ch <- prometheus.MustNewConstMetric(workersDesc, prometheus.GaugeValue, float64(len(p.slots)))
	ch <- prometheus.MustNewConstMetric(workersUpDesc, prometheus.GaugeValue, float64(up))
	ch <- prometheus.MustNewConstMetric(restartsDesc, prometheus.CounterValue, float64(p.restarts.Load()))
	ch <- prometheus.MustNewConstMetric(crashLoopingDesc, prometheus.GaugeValue, float64(crashLooping))
	ch <- prometheus.MustNewConstMetric(cpuDesc, prometheus.CounterValue, cpu.Seconds())
}
