package prober

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/inferprobe/inferprobe/scenarios"
)

// Build readies a loaded scenario's targets for requests. It is the one step
// that reads what a scenario names beyond itself and its datasets — API keys
// from key files or the environment, tokenizers, CA files — and serve (at
// every load and reload), check-config and bench each call it once per
// configuration. Each target's API key is written into cfg, so that a
// rotated key makes a changed target. Problems come back as
// scenarios.Errors, at the line of the field each is about.
func Build(cfg *scenarios.Config) (map[string]*Target, error) {
	problems := cfg.Problems()
	targets := make(map[string]*Target, len(cfg.Targets))
	for _, name := range slices.Sorted(maps.Keys(cfg.Targets)) {
		spec, path := cfg.Targets[name], "targets."+name
		if !resolveAPIKey(spec, problems, path) {
			continue
		}
		t, err := NewTarget(name, spec)
		if err != nil {
			var fe *fieldError
			if errors.As(err, &fe) {
				problems.Errorf(path+"."+fe.field, "%v%s", fe.err, fe.hint)
			} else {
				problems.Errorf(path, "%v", err)
			}
			continue
		}
		targets[name] = t
	}
	if err := problems.Err(); err != nil {
		return nil, err
	}
	return targets, nil
}

// fieldError is a problem with one field of a target's spec.
type fieldError struct {
	target, field string
	err           error
	hint          string // what to do, for the scenario's error
}

func (e *fieldError) Error() string { return "target " + e.target + ": " + e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// resolveAPIKey reads t's API key into t.APIKey, and reports whether it
// could. Messages name the file or the variable, never the key.
func resolveAPIKey(t *scenarios.Target, problems *scenarios.Problems, path string) bool {
	var key, source string
	switch {
	case t.APIKeyFile != "":
		path += ".api_key_file"
		data, err := readKeyFile(t.APIKeyFile)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			problems.Errorf(path, "cannot read %s: %v", t.APIKeyFile, err)
			return false
		}
		key, source = string(data), "file "+t.APIKeyFile
	case t.APIKeyEnv != "":
		path += ".api_key_env"
		var ok bool
		if key, ok = os.LookupEnv(t.APIKeyEnv); !ok {
			problems.Errorf(path, "environment variable %s is not set; export it with the API key", t.APIKeyEnv)
			return false
		}
		source = "environment variable " + t.APIKeyEnv
	default:
		return true
	}
	key = strings.TrimSpace(key)
	switch {
	case key == "":
		problems.Errorf(path, "%s is empty; it must hold the API key", source)
		return false
	case strings.ContainsFunc(key, func(r rune) bool { return r < ' ' || r == 0x7f || r == ' ' }):
		problems.Errorf(path, "%s holds more than one line or word; it must hold only the API key", source)
		return false
	}
	t.APIKey = key
	return true
}

// maxKeyFile bounds what is read as a key file: keys are short, and a path
// such as /dev/zero must not be read until memory runs out.
const maxKeyFile = 64 << 10

// readKeyFile reads a key file, refusing what is not a regular file (a FIFO
// or /dev/stdin would block the load) and what is too large to be a key.
// Symbolic links are followed: Kubernetes mounts secrets through them.
func readKeyFile(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, errors.New("not a regular file; it must be a file holding only the key")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err == nil && len(data) > maxKeyFile {
		err = fmt.Errorf("larger than %d KiB; it must hold only the key", maxKeyFile>>10)
	}
	return data, err
}

// loadCAFile reads a PEM file of CA certificates into a pool.
func loadCAFile(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot read %s: %v", path, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", path)
	}
	return pool, nil
}
