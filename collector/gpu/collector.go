// Package gpu exports GPU telemetry read from DCGM, or from NVML where DCGM
// is absent, under dcgm-exporter's metric names and labels, so its
// dashboards work; and keeps a window of samples from which reports take
// power, energy and utilisation over a run.
package gpu

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
	"github.com/prometheus/client_golang/prometheus"
)

// Options configure the collector.
type Options struct {
	// HostEngine is the address (host:port) of an nv-hostengine to read
	// from. Empty starts DCGM embedded in this process, or NVML when DCGM is
	// not installed but the driver is.
	HostEngine string
	// FieldsFile is a field list in dcgm-exporter's counters format; empty
	// uses the built-in default-counters.csv.
	FieldsFile string
	// Asked says the user asked for GPU telemetry (a flag; a HostEngine
	// asks too): only then is its absence a warning. Unasked, as on by
	// default, a machine without GPUs is said once at debug level
	// (inferprobe_gpu_telemetry_up says it too).
	Asked  bool
	Logger *slog.Logger
}

// Collector reads the GPUs in the background, once a second, and exports
// the latest values on scrape; a scrape never waits for a GPU library.
type Collector struct {
	logger *slog.Logger
	hint   string // what to do when telemetry is unavailable
	asked  bool   // Options.Asked
	open   func([]Field) (Backend, error)
	t      timing
	// fields are read from the backend: the configured ones, then any the
	// window needs that the configuration left out (descs[i] nil).
	fields []Field
	descs  []*prometheus.Desc
	cols   windowCols
	window *Window

	mu  sync.Mutex
	cur snapshot

	phase phase // owned by run

	cancel context.CancelFunc
	done   chan struct{}
}

type timing struct {
	interval               time.Duration // between reads
	backoffMin, backoffMax time.Duration // between connection attempts
	keep                   time.Duration // of samples in the window
}

var defaultTiming = timing{interval: time.Second, backoffMin: time.Second, backoffMax: time.Minute, keep: time.Hour}

// snapshot is the outcome of the latest read; Collect exports it.
type snapshot struct {
	backend     string // "none" while down
	up          bool
	devices     []Device
	rows        [][]float64
	readSeconds float64
}

// phase drives the log: one line per change, none per attempt.
type phase int

const (
	phaseStarting phase = iota
	phaseUp
	phaseDown
)

// windowCols are the positions in c.fields of what the window keeps.
type windowCols struct{ power, energy, util, fbUsed int }

const namespace = "inferprobe"

var (
	upDesc = prometheus.NewDesc(namespace+"_gpu_telemetry_up",
		"Whether GPU telemetry is being read (1) or not (0): no GPU library or GPU, or the hostengine is unreachable.", nil, nil)
	backendDesc = prometheus.NewDesc(namespace+"_gpu_telemetry_backend_info",
		"The library GPU telemetry is read from: dcgm, nvml, simulated (the demo's fake GPUs), or none.", []string{"backend"}, nil)
	// The collector label is constant, so other collectors can export the
	// same families with the same help text (node_exporter's pattern).
	scrapeDurationDesc = prometheus.NewDesc(namespace+"_collector_scrape_duration_seconds",
		"inferprobe: Duration of a collector's latest read of its source.", nil, prometheus.Labels{"collector": "gpu"})
	scrapeSuccessDesc = prometheus.NewDesc(namespace+"_collector_scrape_success",
		"inferprobe: Whether a collector's latest read of its source succeeded.", nil, prometheus.Labels{"collector": "gpu"})
)

// dcgm-exporter's labels, in its order.
var deviceLabels = []string{"gpu", "UUID", "modelName", "Hostname"}

// New loads the field list, registers the collector with reg and starts
// reading in the background. Only a bad field list or a failed registration
// is an error: without a GPU library it logs one line and exports
// inferprobe_gpu_telemetry_up 0.
func New(opts Options, reg prometheus.Registerer) (*Collector, error) {
	fields, err := LoadFields(opts.FieldsFile)
	if err != nil {
		return nil, err
	}
	host := hostnameFor(opts.HostEngine)
	open := func(fs []Field) (Backend, error) { return openLocal(fs, host) }
	hint := "install DCGM, or the NVIDIA driver for NVML's basic fields, or point --collector.gpu.hostengine at a running nv-hostengine"
	if opts.HostEngine != "" {
		open = func(fs []Field) (Backend, error) { return openRemote(fs, opts.HostEngine, host) }
		hint = "start nv-hostengine there (port 5555 by default) or correct --collector.gpu.hostengine"
	}
	c := newCollector(fields, open, opts.Logger, hint, defaultTiming)
	c.asked = opts.Asked || opts.HostEngine != ""
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	c.start()
	return c, nil
}

func newCollector(fields []Field, open func([]Field) (Backend, error), logger *slog.Logger, hint string, t timing) *Collector {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Collector{
		logger: logger.With("collector", "gpu"),
		hint:   hint + "; --no-collector.gpu turns this collector off",
		open:   open,
		t:      t,
		window: NewWindow(int(t.keep / t.interval)),
		cur:    snapshot{backend: "none"},
	}
	for _, f := range fields {
		c.fields = append(c.fields, f)
		c.descs = append(c.descs, prometheus.NewDesc(f.Name, f.Help, deviceLabels, nil))
	}
	col := func(id dcgm.Short, name string) int {
		for i, f := range c.fields {
			if f.ID == id {
				return i
			}
		}
		c.fields = append(c.fields, Field{Name: name, ID: id, Type: prometheus.GaugeValue})
		c.descs = append(c.descs, nil)
		return len(c.fields) - 1
	}
	c.cols = windowCols{
		power:  col(dcgm.DCGM_FI_DEV_POWER_USAGE, "DCGM_FI_DEV_POWER_USAGE"),
		energy: col(dcgm.DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"),
		util:   col(dcgm.DCGM_FI_DEV_GPU_UTIL, "DCGM_FI_DEV_GPU_UTIL"),
		fbUsed: col(dcgm.DCGM_FI_DEV_FB_USED, "DCGM_FI_DEV_FB_USED"),
	}
	return c
}

func (c *Collector) start() {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	go c.run(ctx)
}

// Close stops reading and releases the GPU library.
func (c *Collector) Close() {
	c.cancel()
	<-c.done
}

// Window returns the samples taken over the last hour, for reports.
func (c *Collector) Window() *Window { return c.window }

// run reads once an interval while connected, and reconnects with backoff
// when not, so that neither ever happens on the scrape path.
func (c *Collector) run(ctx context.Context) {
	defer close(c.done)
	var b Backend
	defer func() {
		if b != nil {
			b.Close()
		}
	}()
	bo := backoff{min: c.t.backoffMin, max: c.t.backoffMax}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		begin := time.Now()
		if b == nil {
			var err error
			if b, err = c.open(c.fields); err != nil {
				c.down("", err, time.Since(begin))
				timer.Reset(bo.delay())
				continue
			}
			bo.reset()
			c.connected(b)
		}
		rows, err := b.Read()
		if err != nil {
			name := b.Name()
			b.Close()
			b = nil
			c.down(name, err, time.Since(begin))
			timer.Reset(bo.delay())
			continue
		}
		c.sampled(b, begin, rows, time.Since(begin))
		timer.Reset(max(c.t.interval-time.Since(begin), 0))
	}
}

func (c *Collector) connected(b Backend) {
	c.phase = phaseUp
	c.logger.Info("GPU telemetry on", "backend", b.Name(), "source", b.Summary())
}

// down records a failed connection attempt or read; lost names the backend
// that was being read, "" for a failed attempt.
func (c *Collector) down(lost string, err error, took time.Duration) {
	was := c.phase
	c.phase = phaseDown
	c.mu.Lock()
	c.cur = snapshot{backend: "none", readSeconds: took.Seconds()}
	c.mu.Unlock()
	switch {
	case lost != "":
		c.logger.Warn("GPU telemetry lost; reconnecting in the background", "backend", lost, "err", err)
	case was == phaseStarting && c.asked:
		c.logger.Warn("GPU telemetry unavailable; "+c.hint+"; retrying in the background", "err", err)
	case was == phaseStarting:
		c.logger.Debug("No GPU telemetry (none asked for, none found); "+c.hint+"; retrying in the background", "err", err)
	default:
		c.logger.Debug("GPU telemetry still unavailable", "err", err)
	}
}

func (c *Collector) sampled(b Backend, at time.Time, rows [][]float64, took time.Duration) {
	devs := b.Devices()
	s := Sample{Time: at, GPUs: make([]GPUSample, len(devs))}
	for i, d := range devs {
		r := rows[i]
		s.GPUs[i] = GPUSample{Device: d, PowerWatts: r[c.cols.power], EnergyMillijoules: r[c.cols.energy],
			GPUUtilPercent: r[c.cols.util], FBUsedMiB: r[c.cols.fbUsed]}
	}
	c.window.Add(s)
	c.mu.Lock()
	c.cur = snapshot{backend: b.Name(), up: true, devices: devs, rows: rows, readSeconds: took.Seconds()}
	c.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- upDesc
	ch <- backendDesc
	ch <- scrapeDurationDesc
	ch <- scrapeSuccessDesc
	for _, d := range c.descs {
		if d != nil {
			ch <- d
		}
	}
}

// Collect implements prometheus.Collector: it exports the latest read, and
// no GPU series at all while down, so they go stale rather than flat.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	s := c.cur
	c.mu.Unlock()
	up := 0.0
	if s.up {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, up)
	ch <- prometheus.MustNewConstMetric(backendDesc, prometheus.GaugeValue, 1, s.backend)
	ch <- prometheus.MustNewConstMetric(scrapeDurationDesc, prometheus.GaugeValue, s.readSeconds)
	ch <- prometheus.MustNewConstMetric(scrapeSuccessDesc, prometheus.GaugeValue, up)
	for i, d := range s.devices {
		labels := []string{uintString(d.GPU), d.UUID, d.ModelName, d.Hostname}
		for j, desc := range c.descs {
			if desc == nil || math.IsNaN(s.rows[i][j]) {
				continue
			}
			ch <- prometheus.MustNewConstMetric(desc, c.fields[j].Type, s.rows[i][j], labels...)
		}
	}
}
