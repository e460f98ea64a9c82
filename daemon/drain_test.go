package daemon_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferprobe/inferprobe/daemon"
)

// TestShutdownGracePeriod: on shutdown the daemon stops sending and lets
// requests in flight finish within the grace period; what is still out when
// it ends is cancelled.
func TestShutdownGracePeriod(t *testing.T) {
	for _, tc := range []struct {
		name      string
		grace     time.Duration
		releaseIn time.Duration // when the held requests are let go; 0 = never
		wantOK    bool
	}{
		{"requests finish within the grace period", 5 * time.Second, 100 * time.Millisecond, true},
		{"requests outlive the grace period", 50 * time.Millisecond, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ld := &loader{}
			ld.set(probesYAML(fakeURL, map[string]string{"a": "50"}), nil)
			exec := newFakeExec()
			open := exec.gate("ta")
			d := daemon.New(quietLogger(), prometheus.NewRegistry(), ld.load, exec, daemon.WithGracePeriod(tc.grace))
			stop := start(t, d)
			waitFor(t, "requests in flight", func() bool { return exec.running() >= 3 })
			held := exec.running()
			if tc.releaseIn > 0 {
				time.AfterFunc(tc.releaseIn, open)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			if n := exec.running(); n != 0 {
				t.Fatalf("%d requests still running after Run returned", n)
			}
			sent := len(exec.sent("ta"))
			ok, _ := requestsTotal(t, d, "a", "ok")
			cancelled, _ := requestsTotal(t, d, "a", "cancelled")
			if int(ok+cancelled) != sent {
				t.Errorf("%d sent, %v ok + %v cancelled recorded", sent, ok, cancelled)
			}
			if tc.wantOK && (cancelled != 0 || ok < float64(held)) {
				t.Errorf("within the grace period: %v ok, %v cancelled; want all %d held requests ok", ok, cancelled, held)
			}
			if !tc.wantOK && (ok != 0 || cancelled < float64(held)) {
				t.Errorf("past the grace period: %v ok, %v cancelled; want the %d held requests cancelled", ok, cancelled, held)
			}
		})
	}
}
