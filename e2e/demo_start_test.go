package e2e

import (
	"errors"
	"net"
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
