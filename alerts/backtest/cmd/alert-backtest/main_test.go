package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain runs main instead of the tests when the tests run this binary
// as the command.
func TestMain(m *testing.M) {
	if os.Getenv("ALERT_BACKTEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// command runs the command with args and returns its stdout, stderr and
// exit status.
func command(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ALERT_BACKTEST_MAIN=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const header = "unix_seconds,target,model,ttft_seconds,itl_seconds,latency_seconds,outcome,good\n"

func TestFirings(t *testing.T) {
	// A failure at 1700000030 is scraped at 1700000040 (a 10s interval)
	// and seen by the evaluation at 1700000040.
	records := writeFile(t, "records.csv", header+
		"1700000000,t,m,0.1,0.01,1,ok,1\n"+
		"1700000030,t,m,,,5,error,0\n"+
		"1700000100,t,m,0.1,0.01,1,ok,1\n")
	stdout, stderr, code := command(t, "--rules", "../../testdata/failed.rules.yml", "--records", records,
		"--scrape-interval", "10s", "--evaluation-interval", "20s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	if got["alert"] != "Failed" || got["severity"] != "warning" || got["start"] != 1700000040.0 || got["end"] != nil ||
		got["labels"].(map[string]any)["outcome"] != "error" {
		t.Errorf("firing %s", stdout)
	}
}

func TestExitStatus(t *testing.T) {
	rules := "../../testdata/failed.rules.yml"
	good := writeFile(t, "good.csv", header+"1700000000,t,m,0.1,0.01,1,ok,1\n")
	unsorted := writeFile(t, "unsorted.csv", header+"1700000000,t,m,0.1,0.01,1,ok,1\n1699999999,t,m,0.1,0.01,1,ok,1\n")
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"ok", []string{"--rules", rules, "--records", good}, 0, "0 firings"},
		{"no rules", []string{"--records", good}, 2, "'--rules' not provided"},
		{"missing records", []string{"--rules", rules, "--records", "nowhere.csv"}, 2, "nowhere.csv"},
		{"bad interval", []string{"--rules", rules, "--records", good, "--scrape-interval", "0s"}, 2, "must be positive"},
		{"unsorted", []string{"--rules", rules, "--records", unsorted}, 1, "line 3: unix_seconds 1699999999 is before"},
		{"bad rules", []string{"--rules", good, "--records", good}, 1, "good.csv"},
	} {
		stdout, stderr, code := command(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.stderr) || (code != 0 && stdout != "") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and %q", c.name, code, stdout, stderr, c.code, c.stderr)
		}
	}
}
