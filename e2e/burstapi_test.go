package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// startBurstDemo runs `inferprobe demo` with extra flags and returns its base
// URL once /metrics answers. The simulator is fast so that bursts finish soon.
func startBurstDemo(t *testing.T, flags ...string) string {
	t.Helper()
	addr := freeAddr(t)
	args := append([]string{"demo", "--web.listen-address=" + addr,
		"--sim.ttft=20ms", "--sim.itl=2ms", "--sim.distribution=constant"}, flags...)
	p := inferprobe(t, "inferprobe demo", t.TempDir(), args...)
	base := "http://" + addr
	waitHealthy(t, p, base+"/metrics", 10*time.Second)
	return base
}

// apiCall sends one request to the burst API and returns the status, the
// headers and the body; into, when not nil, receives the decoded body.
func apiCall(t *testing.T, method, url, body string, header http.Header, into any) (int, http.Header, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("%s %s: %d, body not JSON: %v\n%s", method, url, resp.StatusCode, err, b)
		}
	}
	return resp.StatusCode, resp.Header, string(b)
}

// burstRun is the part of a run the tests read.
type burstRun struct {
	ID     string `json:"id"`
	Burst  string `json:"burst"`
	State  string `json:"state"`
	Error  string `json:"error"`
	Report *struct {
		Digest string `json:"sequence_digest"`
	} `json:"report"`
}

// waitRunEnds polls a run until it has ended and returns it.
func waitRunEnds(t *testing.T, base, id string, timeout time.Duration) burstRun {
	t.Helper()
	var run burstRun
	eventually(t, timeout, "run "+id+" ends", func() error {
		if status, _, body := apiCall(t, "GET", base+"/api/v1/bursts/runs/"+id, "", nil, &run); status != http.StatusOK {
			t.Fatalf("GET run %s: %d %s", id, status, body)
		}
		if run.State == "queued" || run.State == "running" {
			return fmt.Errorf("state %s", run.State)
		}
		return nil
	})
	return run
}

func probeRequests(t *testing.T, base string) float64 {
	t.Helper()
	fams, err := scrapeText(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	return value(fams, "inferprobe_requests_total", "phase", "probe")
}

// TestBurstAPI triggers the demo's on-demand burst over HTTP, the way an
// operator would: it runs beside the probes, refuses a second start, ends
// with a report and exact quantiles on /metrics, and can be cancelled.
func TestBurstAPI(t *testing.T) {
	base := startBurstDemo(t, "--web.enable-burst-api")
	api := base + "/api/v1/bursts"

	var list struct {
		Bursts []struct {
			Name     string `json:"name"`
			OnDemand bool   `json:"on_demand"`
		} `json:"bursts"`
	}
	if status, _, body := apiCall(t, "GET", api, "", nil, &list); status != http.StatusOK ||
		len(list.Bursts) != 2 || list.Bursts[0].Name != "demo-burst" || !list.Bursts[0].OnDemand ||
		list.Bursts[1].Name != "demo-capacity" || !list.Bursts[1].OnDemand {
		t.Fatalf("GET %s: %d %s, want the demo's on-demand demo-burst and demo-capacity", api, status, body)
	}

	probesBefore := probeRequests(t, base)
	var started struct {
		ID        string `json:"id"`
		StatusURL string `json:"status_url"`
	}
	status, header, body := apiCall(t, "POST", api+"/demo-burst", `{"duration":"5s"}`, nil, &started)
	if status != http.StatusAccepted || started.ID == "" || header.Get("Location") != started.StatusURL ||
		started.StatusURL != "/api/v1/bursts/runs/"+started.ID {
		t.Fatalf("POST demo-burst: %d %s (Location %q), want 202 with id and status_url", status, body, header.Get("Location"))
	}

	var busy struct{ Running string }
	if status, _, body := apiCall(t, "POST", api+"/demo-burst", "", nil, &busy); status != http.StatusConflict || busy.Running != started.ID {
		t.Fatalf("second POST while %s runs: %d %s, want 409 naming it", started.ID, status, body)
	}

	// The probes keep their schedule while the burst loads the same target.
	eventually(t, 4*time.Second, "probe requests rise while the burst runs", func() error {
		var run burstRun
		apiCall(t, "GET", base+started.StatusURL, "", nil, &run)
		if run.State != "running" && run.State != "queued" {
			t.Fatalf("run %s is %s before the probes sent anything", run.ID, run.State)
		}
		if n := probeRequests(t, base); n <= probesBefore {
			return fmt.Errorf("probe requests %v, were %v", n, probesBefore)
		}
		return nil
	})

	run := waitRunEnds(t, base, started.ID, 45*time.Second)
	if run.State != "succeeded" || run.Report == nil || run.Report.Digest == "" {
		t.Fatalf("run ended %+v (error %q), want succeeded with a report and a sequence digest", run, run.Error)
	}
	fams, err := scrapeText(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	p99 := matching(fams, "inferprobe_burst_last_time_to_first_token_seconds", "burst", "demo-burst", "quantile", "0.99")
	if len(p99) != 1 || p99[0].GetGauge().GetValue() <= 0 {
		t.Errorf("inferprobe_burst_last_time_to_first_token_seconds{burst=\"demo-burst\",quantile=\"0.99\"}: %v, want one positive gauge", p99)
	}
	if n := value(fams, "inferprobe_requests_total", "phase", "burst"); n == 0 {
		t.Error(`no inferprobe_requests_total{phase="burst"}: the burst's requests did not reach the request metrics`)
	}

	// Cancel a run of the configured 20s while it runs.
	var second struct{ ID string }
	if status, _, body := apiCall(t, "POST", api+"/demo-burst", "", nil, &second); status != http.StatusAccepted {
		t.Fatalf("POST demo-burst after the first ended: %d %s", status, body)
	}
	var cancelled burstRun
	if status, _, body := apiCall(t, "DELETE", api+"/runs/"+second.ID, "", nil, &cancelled); status != http.StatusOK || cancelled.ID != second.ID {
		t.Fatalf("DELETE running %s: %d %s, want 200 with the run", second.ID, status, body)
	}
	if run := waitRunEnds(t, base, second.ID, 40*time.Second); run.State != "cancelled" {
		t.Fatalf("cancelled run ended %s, want cancelled", run.State)
	}
	if status, _, body := apiCall(t, "DELETE", api+"/runs/"+second.ID, "", nil, nil); status != http.StatusConflict {
		t.Errorf("DELETE of a finished run: %d %s, want 409", status, body)
	}

	var history struct{ Runs []burstRun }
	if status, _, body := apiCall(t, "GET", api+"/runs", "", nil, &history); status != http.StatusOK || len(history.Runs) != 2 {
		t.Errorf("GET runs: %d %s, want both runs", status, body)
	}
}

// The flags that guard the API, through the real binary.
func TestBurstAPIFlags(t *testing.T) {
	t.Run("off by default", func(t *testing.T) {
		base := startBurstDemo(t)
		if status, _, body := apiCall(t, "POST", base+"/api/v1/bursts/demo-burst", "", nil, nil); status != http.StatusForbidden ||
			!strings.Contains(body, "--web.enable-burst-api") {
			t.Errorf("POST with the API off: %d %s, want 403 naming the flag", status, body)
		}
	})

	t.Run("bearer token", func(t *testing.T) {
		const token = "e2e-burst-token-5c2a"
		file := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		base := startBurstDemo(t, "--web.enable-burst-api", "--web.burst-api.token-file="+file)
		if status, header, body := apiCall(t, "GET", base+"/api/v1/bursts", "", nil, nil); status != http.StatusUnauthorized ||
			!strings.HasPrefix(header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("without the token: %d %s, want 401 with a Bearer challenge", status, body)
		}
		if status, _, body := apiCall(t, "GET", base+"/api/v1/bursts", "", http.Header{"Authorization": {"Bearer " + token}}, nil); status != http.StatusOK {
			t.Errorf("with the token: %d %s, want 200", status, body)
		}
	})

	t.Run("TLS and basic auth", func(t *testing.T) {
		dir := t.TempDir()
		client := writeTLSWebConfig(t, dir, "alice", "hunter2")
		addr := freeAddr(t)
		p := inferprobe(t, "inferprobe demo", dir, "demo", "--web.listen-address="+addr,
			"--web.config.file="+filepath.Join(dir, "web.yml"), "--web.enable-burst-api")
		api := "https://" + addr + "/api/v1/bursts"
		get := func(user, pass string) (int, string) {
			req, _ := http.NewRequest("GET", api, nil)
			if user != "" {
				req.SetBasicAuth(user, pass)
			}
			resp, err := client.Do(req)
			if err != nil {
				return 0, err.Error()
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		eventually(t, 10*time.Second, "the burst API answers over TLS", func() error {
			p.checkRunning(t)
			if status, body := get("alice", "hunter2"); status != http.StatusOK || !strings.Contains(body, "demo-burst") {
				return fmt.Errorf("%d %s", status, body)
			}
			return nil
		})
		for _, c := range []struct{ user, pass string }{{"", ""}, {"alice", "wrong"}} {
			if status, body := get(c.user, c.pass); status != http.StatusUnauthorized {
				t.Errorf("user %q, password %q: %d %s, want 401", c.user, c.pass, status, body)
			}
		}
		if resp, err := httpClient.Get("http://" + addr + "/api/v1/bursts"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || strings.Contains(string(b), "demo-burst") {
				t.Errorf("plain HTTP to the TLS port: %d %s, want Go's 400 for HTTP to an HTTPS server", resp.StatusCode, b)
			}
		}
		// Reads log at debug; a call that could start a run is the audit line at
		// info, even when it is refused (here: no such burst).
		req, _ := http.NewRequest("POST", api+"/no-such-burst", strings.NewReader("{}"))
		req.SetBasicAuth("alice", "hunter2")
		if resp, err := client.Do(req); err != nil {
			t.Fatal(err)
		} else {
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("POST to a burst that does not exist: %d, want 404", resp.StatusCode)
			}
		}
		eventually(t, 5*time.Second, "an audit line naming alice", func() error {
			if out := p.out.String(); !strings.Contains(out, `principal=alice`) {
				return fmt.Errorf("no audit line naming alice:\n%s", out)
			}
			return nil
		})
		if out := p.out.String(); strings.Contains(out, "hunter2") {
			t.Errorf("the password is in the log:\n%s", out)
		}
	})

	for _, c := range []struct {
		name, flag, wantLog string
	}{
		{"missing token file", "--web.burst-api.token-file=/nonexistent/token", "--web.burst-api.token-file"},
		{"zero rate limit", "--web.burst-api.rate-limit=0s", "--web.burst-api.rate-limit=0s: must be positive"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := inferprobe(t, "inferprobe demo", t.TempDir(), "demo", "--web.listen-address="+freeAddr(t), "--web.enable-burst-api", c.flag)
			if code := p.exitCode(t, 20*time.Second); code == 0 {
				t.Errorf("exit 0, want a startup error")
			}
			if out := p.out.String(); !strings.Contains(out, c.wantLog) {
				t.Errorf("output does not contain %q:\n%s", c.wantLog, out)
			}
		})
	}
}

// writeTLSWebConfig writes web.yml (exporter-toolkit's --web.config.file)
// into dir, with a self-signed certificate for 127.0.0.1 and one basic-auth
// user, and returns a client that trusts the certificate.
func writeTLSWebConfig(t *testing.T, dir, user, pass string) *http.Client {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "inferprobe e2e"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(pass), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	for name, data := range map[string][]byte{
		"cert.pem": certPEM,
		"key.pem":  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		"web.yml": []byte("tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n" +
			"basic_auth_users:\n  " + user + ": " + string(hash) + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(certPEM)
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
}
