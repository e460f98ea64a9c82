package backtest

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCSVRoundTrip(t *testing.T) {
	want := []Probe{
		{Time: time.Unix(1764806400, 250_000_001), Target: "vllm-a", Model: "llama", TTFT: 180 * time.Millisecond,
			ITL: 21 * time.Millisecond, Latency: 2400 * time.Millisecond, OK: true, Good: true},
		{Time: time.Unix(1764806401, 0), Target: "a,b", Model: `"q"`, Latency: 30 * time.Second},
		{Time: time.Unix(1764806401, 0), Target: "vllm-a", Model: "llama", TTFT: time.Second, Latency: 9 * time.Second, OK: true},
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, slices.Values(want)); err != nil {
		t.Fatal(err)
	}
	var got []Probe
	for p, err := range ReadCSV(&b) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	if !slices.EqualFunc(got, want, func(a, b Probe) bool {
		return a.Time.Equal(b.Time) && a == Probe{Time: a.Time, Target: b.Target, Model: b.Model, TTFT: b.TTFT, ITL: b.ITL, Latency: b.Latency, OK: b.OK, Good: b.Good}
	}) {
		t.Errorf("read back\n%v\nwant\n%v", got, want)
	}
}

func TestReadCSVErrors(t *testing.T) {
	const header = "unix_seconds,target,model,ttft_seconds,itl_seconds,latency_seconds,outcome,good\n"
	const row = "1764806400,t,m,0.1,0.01,1,ok,1\n"
	for _, c := range []struct{ name, file, want string }{
		{"empty", "", "line 1: empty file"},
		{"header", "time,target,model,ttft,itl,latency,outcome,good\n" + row, "line 1: header"},
		{"columns", header + "1764806400,t,m,0.1,0.01,1,ok\n", "line 2"},
		{"unsorted", header + row + "1764806399,t,m,0.1,0.01,1,ok,1\n", "line 3: unix_seconds 1764806399 is before"},
		{"time", header + row + "soon,t,m,0.1,0.01,1,ok,1\n", `line 3: unix_seconds "soon"`},
		{"ttft", header + "1764806400,t,m,-0.1,0.01,1,ok,1\n", `line 2: ttft_seconds "-0.1"`},
		{"itl", header + "1764806400,t,m,0.1,1e,1,ok,1\n", `line 2: itl_seconds "1e"`},
		{"latency", header + "1764806400,t,m,0.1,0.01,,ok,1\n", `line 2: latency_seconds ""`},
		{"outcome", header + "1764806400,t,m,0.1,0.01,1,cancelled,0\n", `line 2: outcome "cancelled"`},
		{"good", header + "1764806400,t,m,0.1,0.01,1,ok,yes\n", `line 2: good "yes"`},
		{"good failure", header + "1764806400,t,m,,,1,error,1\n", "line 2: a failed request cannot be good"},
		{"itl on a failure", header + "1764806400,t,m,0.1,0.01,1,error,0\n", "line 2: an ITL"},
	} {
		var err error
		n := 0
		for _, err = range ReadCSV(strings.NewReader(c.file)) {
			if err != nil {
				break
			}
			n++
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
}

func TestParseSeconds(t *testing.T) {
	for s, want := range map[string]int64{
		"1764806400.123456789": 1764806400123456789, "1764806400": 1764806400e9, "0.5": 5e8, ".25": 25e7,
		"1.5e-3": 1_500_000,
	} {
		if got, ok := parseSeconds(s); !ok || got != want {
			t.Errorf("parseSeconds(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "x", "NaN", "1e300", "1.2.3"} {
		if _, ok := parseSeconds(s); ok {
			t.Errorf("parseSeconds(%q) accepted", s)
		}
	}
}

func equalProbe(a, b Probe) bool {
	sameTime := a.Time.Equal(b.Time)
	a.Time, b.Time = time.Time{}, time.Time{}
	return sameTime && a == b
}
