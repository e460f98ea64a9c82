package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	unitFile  = "systemd/inferprobe.service"
	keyDropIn = "systemd/inferprobe.service.d/api-key.conf"
)

// parseUnit returns the unit's settings by section and key, continuation lines joined; a
// repeated key keeps every value.
func parseUnit(t *testing.T, name, data string) map[string]map[string][]string {
	t.Helper()
	unit := map[string]map[string][]string{}
	var section, pending string
	for i, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(line)
		if pending != "" {
			line = pending + " " + line
			pending = ""
		}
		if strings.HasSuffix(line, `\`) {
			pending = strings.TrimSuffix(line, `\`)
			continue
		}
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			unit[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not KEY=VALUE in a section: %q", name, i+1, line)
			}
			unit[section][k] = append(unit[section][k], strings.Join(strings.Fields(v), " "))
		}
	}
	return unit
}

func TestSystemdUnit(t *testing.T) {
	data, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	unit := parseUnit(t, unitFile, string(data))
	svc := unit["Service"]
	one := func(k string) string {
		if len(svc[k]) != 1 {
			t.Errorf("[Service] %s: want exactly one value, have %q", k, svc[k])
			return ""
		}
		return svc[k][0]
	}
	for k, want := range map[string]string{
		"NoNewPrivileges":         "yes",
		"CapabilityBoundingSet":   "",
		"AmbientCapabilities":     "",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"PrivateTmp":              "yes",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
		"MemoryDenyWriteExecute":  "yes",
		"SystemCallFilter":        "@system-service",
		"SystemCallArchitectures": "native",
		"RestrictSUIDSGID":        "yes",
		"LockPersonality":         "yes",
		"DynamicUser":             "yes",
		"StateDirectory":          "inferprobe",
		"ExecReload":              "/bin/kill -HUP $MAINPID",
		"KillMode":                "mixed",
		"Restart":                 "on-failure",
	} {
		if got := one(k); got != want {
			t.Errorf("[Service] %s=%s, want %s", k, got, want)
		}
	}
	if v := svc["User"]; len(v) > 0 && (v[0] == "root" || v[0] == "0") {
		t.Errorf("[Service] User=%s: never root", v[0])
	}

	cmdline := strings.Fields(one("ExecStart"))
	if len(cmdline) < 2 || cmdline[1] != "serve" {
		t.Fatalf("ExecStart=%v: want BINARY serve …", cmdline)
	}
	args := cmdline[2:]
	if sp, _ := flagValue(args, "storage.path"); sp != "%S/"+one("StateDirectory") {
		t.Errorf("--storage.path=%s, want %%S/%s: the StateDirectory the unit creates", sp, one("StateDirectory"))
	}
	grace := 10 * time.Second
	if v, ok := flagValue(args, "shutdown.grace-period"); ok {
		if grace, err = time.ParseDuration(v); err != nil {
			t.Fatal(err)
		}
	}
	if stop, err := time.ParseDuration(one("TimeoutStopSec")); err != nil || stop <= grace+10*time.Second {
		t.Errorf("TimeoutStopSec=%s must exceed --shutdown.grace-period %v + 10s (worker stop and web shutdown): %v", one("TimeoutStopSec"), grace, err)
	}
	// A keyless server needs no key file: LoadCredential= fails the start while its file is
	// missing, so it lives in the drop-in that keyed setups add.
	if v := svc["LoadCredential"]; len(v) > 0 {
		t.Errorf("[Service] LoadCredential=%s: the unit would not start on a host without that file; it belongs in %s", v[0], keyDropIn)
	}
	checkKeyDropIn(t)
	if env := svc["Environment"]; len(env) > 0 && secretLike.MatchString(strings.Join(env, " ")) {
		t.Errorf("Environment= holds what looks like a credential: use LoadCredential")
	}
	t.Run("flags", func(t *testing.T) { checkFlags(t, unitFile, "serve", args) })
	t.Run("run", func(t *testing.T) {
		// %S is /var/lib for a system unit; systemd expands it before exec.
		expanded := make([]string, len(args))
		for i, a := range args {
			expanded[i] = strings.ReplaceAll(a, "%S", "/var/lib")
		}
		cfg, _ := flagValue(expanded, "config.file")
		sp, _ := flagValue(expanded, "storage.path")
		checkDeployed(t, unitFile, deployed{args: expanded, files: map[string]string{cfg: composeScenario(t)}, dirs: []string{sp}})
	})
	t.Run("systemd-analyze", func(t *testing.T) { verifyUnit(t, string(data), cmdline[0]) })
}

// verifyUnit runs systemd-analyze verify on the unit, with the binary's path pointed at an
// executable that exists here; any message it prints (an unknown key, a bad value) fails.
func verifyUnit(t *testing.T, data, bin string) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not found; the hardening keys were checked by parsing")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "inferprobe")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(dir, "inferprobe.service")
	if err := os.WriteFile(unit, []byte(strings.ReplaceAll(data, bin, fake)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sa, "verify", "--man=no", unit).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) != 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// checkKeyDropIn: the drop-in for keyed targets hands the key in as a credential, not as a
// readable file of the host or a variable, and shows the scenario's api_key_file for it.
func checkKeyDropIn(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(keyDropIn)
	if err != nil {
		t.Fatal(err)
	}
	drop := parseUnit(t, keyDropIn, string(data))
	if len(drop) != 1 || len(drop["Service"]) != 1 || len(drop["Service"]["LoadCredential"]) != 1 {
		t.Fatalf("%s: want exactly [Service] LoadCredential=NAME:PATH, have %v", keyDropIn, drop)
	}
	cred, file, _ := strings.Cut(drop["Service"]["LoadCredential"][0], ":")
	if cred == "" || !strings.HasPrefix(file, "/") {
		t.Errorf("%s: LoadCredential=%s: want NAME:/ABSOLUTE/PATH", keyDropIn, drop["Service"]["LoadCredential"][0])
	}
	if !strings.Contains(string(data), "api_key_file: /run/credentials/inferprobe.service/"+cred) {
		t.Errorf("%s: its comments must show the scenario's api_key_file: /run/credentials/inferprobe.service/%s", keyDropIn, cred)
	}
	if !strings.Contains(string(data), "/etc/systemd/system/inferprobe.service.d/") {
		t.Errorf("%s: its comments must say where it is installed", keyDropIn)
	}
}
