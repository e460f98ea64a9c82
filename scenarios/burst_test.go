package scenarios

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// validBurst is valid plus one burst; each case below edits one spot of it.
const validBurst = valid + `bursts:
  nightly:
    target: qwen
    schedule: "0 3 * * *"
    duration: 2m
    arrival: {rate: 10}
`

func editBurst(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(validBurst, old) {
		t.Fatalf("%q is not in the valid burst scenario", old)
	}
	return strings.Replace(validBurst, old, new, 1)
}

func TestBurstDefaults(t *testing.T) {
	c, err := Parse([]byte(validBurst), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Burst{
		Target:      "qwen",
		Schedule:    "0 3 * * *",
		Duration:    Duration(2 * time.Minute),
		Arrival:     Arrival{Pattern: ArrivalPoisson, Rate: 10},
		Dataset:     Dataset{Synthetic: &Synthetic{InputTokens: Lengths{Mean: 128}, OutputTokens: Lengths{Mean: 64}}},
		GracePeriod: Duration(30 * time.Second),
		Overlap:     OverlapSkip,
		Max:         BurstMax{Duration: Duration(2 * time.Minute), Rate: 10},
	}
	if got := c.Bursts["nightly"]; !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestBurstValid(t *testing.T) {
	for _, tc := range []struct{ name, old, new string }{
		{"every", `schedule: "0 3 * * *"`, "every: 6h"},
		{"on demand only", `schedule: "0 3 * * *"`, "on_demand: true"},
		{"descriptor", `"0 3 * * *"`, "'@hourly'"},
		{"time zone", `"0 3 * * *"`, `"CRON_TZ=UTC 0 3 * * *"`},
		{"requests", "duration: 2m", "requests: 100"},
		{"closed loop", "{rate: 10}", "{pattern: concurrency, concurrency: 8}\n    max: {concurrency: 16}"},
		{"warmup and maxima", "{rate: 10}", "{rate: 10, max_concurrency: 4}\n    warmup: {duration: 5s}\n    max: {duration: 5m, requests: 10, rate: 20, concurrency: 8}\n    overlap: queue\n    grace_period: 0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse([]byte(editBurst(t, tc.old, tc.new)), "s.yml"); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestBurstValidationErrors(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"name", "  nightly:", "  night ly:", `s.yml:10:3: bursts.night ly: name "night ly" may use only letters, digits, '_', '.' and '-' (it becomes a label value)`},
		{"target missing", "    target: qwen\n    schedule", "    schedule", `s.yml:10:3: bursts.nightly.target: is required; defined targets: qwen`},
		{"target undefined", "    target: qwen\n    schedule", "    target: qwn\n    schedule", `s.yml:11:13: bursts.nightly.target: target "qwn" is not defined; defined targets: qwen`},
		{"never starts", `    schedule: "0 3 * * *"` + "\n", "", `s.yml:10:3: bursts.nightly: never starts: set schedule (e.g. schedule: "0 3 * * *"), every (e.g. every: 6h) or on_demand: true`},
		{"schedule and every", `schedule: "0 3 * * *"`, `schedule: "0 3 * * *"` + "\n    every: 1h", `s.yml:13:12: bursts.nightly.every: cannot be used with schedule; keep one`},
		{"schedule fields", `"0 3 * * *"`, `"0 3 * *"`, `s.yml:12:15: bursts.nightly.schedule: "0 3 * *" is not a cron schedule (expected exactly 5 fields, found 4: [0 3 * *]); write five fields, minute hour day-of-month month day-of-week, e.g. "0 3 * * *", or @hourly, @daily, @weekly, @monthly`},
		{"schedule range", `"0 3 * * *"`, `"0 25 * * *"`, `s.yml:12:15: bursts.nightly.schedule: "0 25 * * *" is not a cron schedule (end of range (25) above maximum (23): 25); write five fields, minute hour day-of-month month day-of-week, e.g. "0 3 * * *", or @hourly, @daily, @weekly, @monthly`},
		{"schedule @every", `"0 3 * * *"`, `"@every 1h"`, `s.yml:12:15: bursts.nightly.schedule: write every: 1h instead of schedule: "@every 1h"`},
		// The cron parser reads a descriptor behind a time zone, and "@every 0s" as every second.
		{"schedule @every behind a time zone", `"0 3 * * *"`, `"CRON_TZ=UTC @every 0s"`, `s.yml:12:15: bursts.nightly.schedule: write every: 0s instead of schedule: "CRON_TZ=UTC @every 0s"`},
		{"schedule @every behind TZ", `"0 3 * * *"`, `"TZ=Europe/Berlin @every 1h"`, `s.yml:12:15: bursts.nightly.schedule: write every: 1h instead of schedule: "TZ=Europe/Berlin @every 1h"`},
		{"schedule zone alone", `"0 3 * * *"`, `"CRON_TZ=UTC"`, `s.yml:12:15: bursts.nightly.schedule: "CRON_TZ=UTC" has a time zone but no schedule, e.g. "CRON_TZ=Europe/Berlin 0 3 * * *"`},
		{"schedule never fires", `"0 3 * * *"`, `"0 0 30 2 *"`, `s.yml:12:15: bursts.nightly.schedule: "0 0 30 2 *" never fires`},
		{"every zero", `schedule: "0 3 * * *"`, "every: 0s", `s.yml:12:12: bursts.nightly.every: must be > 0, e.g. every: 6h`},
		{"never ends", "    duration: 2m\n", "", `s.yml:10:3: bursts.nightly: never ends: set duration (e.g. duration: 2m), requests (e.g. requests: 1000), or both (whichever comes first)`},
		{"duration and requests", "duration: 2m", "duration: 0s\n    requests: 0", `s.yml:13:15: bursts.nightly.duration: must be > 0, e.g. duration: 2m
s.yml:14:15: bursts.nightly.requests: must be >= 1, e.g. requests: 1000`},
		{"duration zero", "duration: 2m", "duration: 0s", `s.yml:13:15: bursts.nightly.duration: must be > 0, e.g. duration: 2m`},
		{"requests zero", "duration: 2m", "requests: 0", `s.yml:13:15: bursts.nightly.requests: must be >= 1, e.g. requests: 1000`},
		{"arrival", "{rate: 10}", "{rate: 0}", `s.yml:14:21: bursts.nightly.arrival.rate: must be > 0, e.g. rate: 0.2 (requests per second)`},
		{"params", "{rate: 10}", "{rate: 10}\n    params: {max_tokens: 5}", `s.yml:15:14: bursts.nightly.params.max_tokens: is set by inferprobe: output length comes from dataset.synthetic.output_tokens; set it there`},
		{"slo", "{rate: 10}", "{rate: 10}\n    slo: {request_latency: -1s}", `s.yml:15:28: bursts.nightly.slo.request_latency: must be >= 0 (0 or absent means no SLO), not -1s`},
		{"warmup empty", "{rate: 10}", "{rate: 10}\n    warmup: {}", `s.yml:15:5: bursts.nightly.warmup: must set requests (e.g. requests: 20), duration (e.g. duration: 10s), or both (whichever comes first)`},
		{"warmup requests zero", "{rate: 10}", "{rate: 10}\n    warmup: {requests: 0}", `s.yml:15:24: bursts.nightly.warmup.requests: must be >= 1, e.g. requests: 20 (leave warmup out for none)`},
		{"warmup duration zero", "{rate: 10}", "{rate: 10}\n    warmup: {duration: 0s}", `s.yml:15:24: bursts.nightly.warmup.duration: must be > 0, e.g. duration: 10s (leave warmup out for none)`},
		{"grace period", "{rate: 10}", "{rate: 10}\n    grace_period: -1s", `s.yml:15:19: bursts.nightly.grace_period: must be >= 0, not -1s`},
		{"overlap", "{rate: 10}", "{rate: 10}\n    overlap: cancel", `s.yml:15:14: bursts.nightly.overlap: must be skip or queue, not "cancel"`},
		{"max duration below", "{rate: 10}", "{rate: 10}\n    max: {duration: 1m}", `s.yml:15:21: bursts.nightly.max.duration: must be at least duration (2m0s)`},
		{"max duration zero", "{rate: 10}", "{rate: 10}\n    max: {duration: 0s}", `s.yml:15:21: bursts.nightly.max.duration: must be > 0, e.g. duration: 10m`},
		{"max requests below", "duration: 2m", "requests: 100\n    max: {requests: 10}", `s.yml:14:21: bursts.nightly.max.requests: must be at least requests (100)`},
		{"max requests zero", "{rate: 10}", "{rate: 10}\n    max: {requests: 0}", `s.yml:15:21: bursts.nightly.max.requests: must be >= 1, e.g. requests: 10000`},
		{"max rate below", "{rate: 10}", "{rate: 10}\n    max: {rate: 5}", `s.yml:15:17: bursts.nightly.max.rate: must be at least arrival.rate (10)`},
		{"max rate zero", "{rate: 10}", "{rate: 10}\n    max: {rate: 0}", `s.yml:15:17: bursts.nightly.max.rate: must be > 0, e.g. rate: 50`},
		{"max rate closed loop", "{rate: 10}", "{pattern: concurrency, concurrency: 4}\n    max: {rate: 5}", `s.yml:15:17: bursts.nightly.max.rate: applies only to an arrival with a rate; remove it`},
		{"max concurrency below", "{rate: 10}", "{rate: 10, max_concurrency: 8}\n    max: {concurrency: 4}", `s.yml:15:24: bursts.nightly.max.concurrency: must be at least the configured concurrency (8)`},
		{"max concurrency zero", "{rate: 10}", "{rate: 10}\n    max: {concurrency: 0}", `s.yml:15:24: bursts.nightly.max.concurrency: must be >= 1, e.g. concurrency: 64`},
		{"unknown field", "{rate: 10}", "{rate: 10}\n    warmpu: {requests: 1}", `s.yml:15:5: bursts.nightly: unknown field "warmpu"; did you mean "warmup"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(editBurst(t, tc.old, tc.new)), "s.yml")
			if err == nil {
				t.Fatalf("no error; burst %+v", c.Bursts)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestBurstBothLimits: a burst and its warmup may end by count and by time,
// whichever comes first, as AIPerf's --request-count with
// --benchmark-duration and --warmup-request-count with --warmup-duration.
func TestBurstBothLimits(t *testing.T) {
	c, err := Parse([]byte(editBurst(t, "duration: 2m", "duration: 2m\n    requests: 10\n    warmup: {requests: 5, duration: 5s}")), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	b := c.Bursts["nightly"]
	if b.Duration != Duration(2*time.Minute) || b.Requests != 10 || b.Warmup != (Warmup{Requests: 5, Duration: Duration(5 * time.Second)}) {
		t.Errorf("burst %+v", b)
	}
}

// TestDemoBurst: the demo ships an on-demand burst against the simulator.
func TestDemoBurst(t *testing.T) {
	c, err := Parse(Demo, DemoFilename)
	if err != nil {
		t.Fatal(err)
	}
	b := c.Bursts["demo-burst"]
	if b == nil || b.Target != "simulator" || !b.OnDemand || b.Schedule != "" || b.Every != 0 ||
		b.Duration != Duration(20*time.Second) ||
		!reflect.DeepEqual(b.Arrival, Arrival{Pattern: ArrivalPoisson, Rate: 8, MaxConcurrency: 16}) {
		t.Errorf("demo-burst = %+v", b)
	}
}

// FuzzParseSchedule: whatever the file holds, the cron parser is never
// reached with input that makes it panic.
func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{"0 3 * * *", "@hourly", "@every 1h", "CRON_TZ=UTC 0 3 * * *", "TZ=UTC", "*/0 * * * *", "0 0 30 2 *", "CRON_TZ=UTC @every 0s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		_, _ = ParseSchedule(spec)
	})
}

// TestBurstSearch: a search burst is a closed loop with bench's search
// settings, checked as bench checks them, with the block's own names.
func TestBurstSearch(t *testing.T) {
	closed := "{pattern: concurrency, concurrency: 1}"
	c, err := Parse([]byte(editBurst(t, "{rate: 10}", closed+"\n    search: {recipe: max-concurrency-under-sla, ttft_sla: 500ms, concurrency_max: 64, time_limit: 30m, sla_replicates: 3, sla_warmup: 45s}")), "s.yml")
	if err != nil {
		t.Fatal(err)
	}
	s := c.Bursts["nightly"].Search.Settings(true)
	if s.Recipe != "max-concurrency-under-sla" || s.TTFT != 500 || s.Max != 64 || s.Replicates != 3 || s.Warmup == nil || *s.Warmup != 45 {
		t.Errorf("settings %+v", s)
	}
	for _, tc := range []struct{ name, new, want string }{
		{"open loop", "{rate: 10}\n    search: {recipe: max-concurrency-under-sla, ttft_sla: 1s}",
			"s.yml:15:5: bursts.nightly.search: a search steps the concurrency of a closed loop: set arrival: {pattern: concurrency} without a series"},
		{"no SLA", closed + "\n    search: {recipe: max-concurrency-under-sla}",
			"s.yml:15:5: bursts.nightly.search: --search-recipe max-concurrency-under-sla needs at least one of --ttft-sla-ms"},
		{"Bayesian", closed + "\n    search: {recipe: max-concurrency-under-sla, style: bo, e2e_sla: 1s}",
			"inferprobe runs no Bayesian search"},
		{"time limit", closed + "\n    search: {recipe: max-concurrency-under-sla, e2e_sla: 1s, time_limit: -1s}",
			"s.yml:15:74: bursts.nightly.search.time_limit: must be >= 0, not -1s"},
		{"replicates of monotonic", closed + "\n    search: {recipe: max-concurrency-under-sla, style: monotonic, e2e_sla: 1s, sla_replicates: 3}",
			"here they are this block's fields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(editBurst(t, "{rate: 10}", tc.new)), "s.yml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want %q", err, tc.want)
			}
		})
	}
}
