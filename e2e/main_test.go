// Package e2e runs the real inferprobe binary, and a real Prometheus where a
// test needs one, the way a user would: separate processes on 127.0.0.1.
package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is the inferprobe executable that TestMain builds.
var binary string

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "inferprobe-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "inferprobe")
	args := []string{"build", "-o", binary}
	if raceEnabled {
		// Under -race the binary is instrumented too, so a data race in the
		// daemon under real traffic fails the test that triggered it.
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, "github.com/inferprobe/inferprobe/cmd/inferprobe")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building inferprobe: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// requirePrometheus returns the path of the prometheus binary. Without one the
// test is skipped, unless INFERPROBE_E2E=1 (make test) asks for every test.
func requirePrometheus(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("INFERPROBE_E2E") == "1" {
			t.Fatalf("prometheus is not on PATH and INFERPROBE_E2E=1: run `make deps` to install it")
		}
		t.Skip("prometheus is not on PATH; run `make deps` to install it (set INFERPROBE_E2E=1 to fail instead of skipping)")
	}
	return path
}

// freeAddr returns a 127.0.0.1 address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// process is a command started in its own process group, so that killing it
// also kills anything it forked.
type process struct {
	name string
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{} // closed once the process has exited
	err  error         // from Wait; read only after done
}

// start runs bin in dir. The process is killed when the test ends, and its
// output goes to the test log if the test failed.
func start(t *testing.T, name, dir, bin string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if strings.Contains(out.String(), "WARNING: DATA RACE") {
			t.Errorf("%s reported a data race", name)
		}
		if t.Failed() {
			t.Logf("output of %s (%s):\n%s", name, strings.Join(cmd.Args, " "), out.String())
		}
	})
	return p
}

// inferprobe starts the binary under test.
func inferprobe(t *testing.T, name, dir string, args ...string) *process {
	t.Helper()
	return start(t, name, dir, binary, args...)
}

// kill ends the process group at once and waits for the process to exit.
func (p *process) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// exitCode waits up to timeout for the process to exit by itself.
func (p *process) exitCode(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("%s still running after %s", p.name, timeout)
	}
	var exit *exec.ExitError
	if errors.As(p.err, &exit) {
		return exit.ExitCode()
	}
	if p.err != nil {
		t.Fatalf("%s: %v", p.name, p.err)
	}
	return 0
}

// checkRunning fails the test if the process has exited.
func (p *process) checkRunning(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		t.Fatalf("%s exited unexpectedly: %v", p.name, p.err)
	default:
	}
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// eventually calls f until it returns nil, failing the test with f's last
// error once timeout has passed. f may call t.Fatal for errors that waiting
// cannot cure.
func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

// waitHealthy waits until GET url answers 200 while p keeps running.
func waitHealthy(t *testing.T, p *process, url string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, p.name+" answers "+url, func() error {
		p.checkRunning(t)
		resp, err := httpClient.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
}

// signal sends sig to the process itself (not its group).
func (p *process) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signalling %s: %v", p.name, err)
	}
}
