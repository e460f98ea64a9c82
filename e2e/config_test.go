package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// typo turns a valid scenario into one with an unknown field, and returns
// the broken file with the "LINE:COL" of the field.
func typo(t *testing.T, good string) (bad, lineCol string) {
	t.Helper()
	bad = strings.Replace(good, "    arrival:", "    arival:", 1)
	for i, line := range strings.Split(bad, "\n") {
		if col := strings.Index(line, "arival:"); col >= 0 {
			return bad, fmt.Sprintf("%d:%d", i+1, col+1)
		}
	}
	t.Fatal("scenario has no arrival field to misspell")
	return "", ""
}

// wantConfigError requires output to point at the misspelt field the way
// compilers do: file:line:col, then the field.
func wantConfigError(t *testing.T, what, output, file, lineCol string) {
	t.Helper()
	want := regexp.MustCompile(regexp.QuoteMeta(file+":"+lineCol+":") + `.*unknown field \\?"arival\\?"`)
	if !want.MatchString(output) {
		t.Errorf("%s: output does not match %q:\n%s", what, want, output)
	}
}

func TestBrokenScenarioFile(t *testing.T) {
	dir := t.TempDir()
	simAddr := freeAddr(t)
	good := scenario(simAddr)
	broken, lineCol := typo(t, good)
	if err := os.WriteFile(filepath.Join(dir, "bad.yml"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("check-config", func(t *testing.T) {
		p := inferprobe(t, "inferprobe check-config", dir, "check-config", "bad.yml")
		if code := p.exitCode(t, 10*time.Second); code != 1 {
			t.Errorf("exit status %d, want 1", code)
		}
		wantConfigError(t, "check-config", p.out.String(), "bad.yml", lineCol)
	})

	t.Run("serve", func(t *testing.T) {
		p := inferprobe(t, "inferprobe serve", dir, "serve", "--config.file=bad.yml", "--web.listen-address="+freeAddr(t))
		if code := p.exitCode(t, 10*time.Second); code != 1 {
			t.Errorf("exit status %d, want 1", code)
		}
		wantConfigError(t, "serve", p.out.String(), "bad.yml", lineCol)
	})

	t.Run("reload", func(t *testing.T) {
		startSimulator(t, simAddr)
		config := writeScenario(t, dir, "scenario.yml", simAddr)
		addr := freeAddr(t)
		serve := inferprobe(t, "inferprobe serve", dir, "serve",
			"--config.file=scenario.yml", "--web.listen-address="+addr, "--web.enable-lifecycle")
		base := "http://" + addr
		waitHealthy(t, serve, base+"/-/ready", 10*time.Second)

		// state scrapes the daemon: ok requests so far, and whether the last
		// configuration load succeeded.
		state := func() (ok, reloadOK float64) {
			t.Helper()
			serve.checkRunning(t)
			fams, err := scrapeText(base + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			if len(matching(fams, "inferprobe_config_last_reload_successful")) != 1 {
				t.Fatal("inferprobe_config_last_reload_successful is not exported")
			}
			return value(fams, "inferprobe_requests_total", "outcome", "ok"),
				value(fams, "inferprobe_config_last_reload_successful")
		}
		eventually(t, 10*time.Second, "probe requests succeed", func() error {
			if ok, reloadOK := state(); ok < 1 || reloadOK != 1 {
				return fmt.Errorf("%v ok requests, reload successful %v", ok, reloadOK)
			}
			return nil
		})

		if err := os.WriteFile(config, []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		resp, err := httpClient.Post(base+"/-/reload", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusInternalServerError {
			t.Errorf("POST /-/reload of a broken file: status %d, want 500", resp.StatusCode)
		}
		wantConfigError(t, "POST /-/reload", string(body), "scenario.yml", lineCol)

		okAtReload, reloadOK := state()
		if reloadOK != 0 {
			t.Errorf("inferprobe_config_last_reload_successful = %v after a failed reload, want 0", reloadOK)
		}
		eventually(t, 10*time.Second, "the old configuration keeps probing", func() error {
			if ok, _ := state(); ok < okAtReload+3 {
				return fmt.Errorf("ok requests went from %v to %v", okAtReload, ok)
			}
			return nil
		})

		if err := os.WriteFile(config, []byte(good), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(serve.cmd.Process.Pid, syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "SIGHUP with the file fixed", func() error {
			if _, reloadOK := state(); reloadOK != 1 {
				return fmt.Errorf("inferprobe_config_last_reload_successful = %v", reloadOK)
			}
			return nil
		})
	})
}
