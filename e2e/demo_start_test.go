package e2e

import (
	"errors"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDemoPortTaken: with its port in use, demo fails at once, says which flag to change,
// and never prints a banner with addresses that would not answer.
func TestDemoPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := inferprobe(t, "inferprobe demo", t.TempDir(), "demo", "--web.listen-address="+l.Addr().String())
	if code := p.exitCode(t, 10*time.Second); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	out := p.out.String()
	if strings.Contains(out, "landing page:") {
		t.Errorf("printed its banner although its port was taken:\n%s", out)
	}
	if !strings.Contains(out, "--web.listen-address") || !strings.Contains(out, "address already in use") {
		t.Errorf("the error should name the taken address and the flag to change:\n%s", out)
	}
}

// TestDemoBannerAfterBind: once the banner is out, the landing page it names accepts
// connections.
func TestDemoBannerAfterBind(t *testing.T) {
	addr := freeAddr(t)
	p := inferprobe(t, "inferprobe demo", t.TempDir(), "demo", "--web.listen-address="+addr)
	eventually(t, 15*time.Second, "demo prints its banner", func() error {
		p.checkRunning(t)
		if !strings.Contains(p.out.String(), "landing page:") {
			return errors.New("no banner yet")
		}
		return nil
	})
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatalf("banner printed, but %s does not accept connections: %v", addr, err)
	}
	c.Close()
}

// TestDemoLiveLine: after its banner, demo prints a line per probe with a latency number
// (the simulator's TTFT of its default profile) and the error ratio, and logs no GPU warning.
func TestDemoLiveLine(t *testing.T) {
	addr := freeAddr(t)
	p := inferprobe(t, "inferprobe demo", t.TempDir(), "demo", "--web.listen-address="+addr)
	line := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d chat-steady → simulator: TTFT p50 (\d+(?:\.\d+)?) ms, p99 \d+(?:\.\d+)? ms; ITL p50 \d+(?:\.\d+)? ms; errors \d+\.\d % \(\d+ of \d+, last 5 min\)$`)
	var m []string
	eventually(t, 30*time.Second, "demo prints chat-steady's latency line", func() error {
		p.checkRunning(t)
		if m = line.FindStringSubmatch(p.out.String()); m == nil {
			return errors.New("no latency line yet")
		}
		return nil
	})
	if ms, _ := strconv.ParseFloat(m[1], 64); ms <= 0 {
		t.Errorf("TTFT p50 %s ms in %q", m[1], m[0])
	}
	// The demo's GPUs are simulated: no flag asked for real ones, so a machine
	// without any is no reason to warn.
	for _, l := range strings.Split(p.out.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "GPU") {
			t.Errorf("the demo warns about GPUs: %s", l)
		}
	}
}
