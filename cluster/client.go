package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"go.yaml.in/yaml/v3"
)

// Client makes the calls between replicas with the credentials the burst
// API takes: the bearer token of --web.burst-api.token-file and, when
// --web.config.file serves TLS, the replica's own certificate as its client
// certificate, checked by the peer against client_ca_file as any client.
type Client struct {
	http   *http.Client
	scheme string
	token  string
}

// maxReply bounds a peer's reply: a share's records of a large burst are
// tens of MiB, never gigabytes.
const maxReply = 1 << 30

// NewClient returns a client that sends token (when not empty) and speaks
// TLS with tlsConfig (when not nil).
func NewClient(token string, tlsConfig *tls.Config) *Client {
	c := &Client{scheme: "http", token: token, http: &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig, MaxIdleConnsPerHost: 4}}}
	if tlsConfig != nil {
		c.scheme = "https"
	}
	return c
}

// ClientTLS is the client side of a --web.config.file: nil when it serves
// plain HTTP; otherwise the server's certificate, presented as the client
// certificate, and client_ca_file, trusted to have signed the peers'
// certificates (the system's roots without one). Paths are relative to the
// file, as exporter-toolkit reads them. mutual says the peers check each
// other's certificates (client_auth_type: RequireAndVerifyClientCert), which
// authenticates the calls without a token.
func ClientTLS(webConfigFile string) (cfg *tls.Config, mutual bool, err error) {
	if webConfigFile == "" {
		return nil, false, nil
	}
	b, err := os.ReadFile(webConfigFile)
	if err != nil {
		return nil, false, fmt.Errorf("cluster calls: %w", err)
	}
	var c struct {
		TLS struct {
			Cert     string `yaml:"cert_file"`
			Key      string `yaml:"key_file"`
			ClientCA string `yaml:"client_ca_file"`
			Auth     string `yaml:"client_auth_type"`
		} `yaml:"tls_server_config"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		return nil, false, fmt.Errorf("cluster calls: reading %s: %w", webConfigFile, err)
	}
	if c.TLS.Cert == "" {
		return nil, false, nil
	}
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(filepath.Dir(webConfigFile), p)
	}
	cert, err := tls.LoadX509KeyPair(rel(c.TLS.Cert), rel(c.TLS.Key))
	if err != nil {
		return nil, false, fmt.Errorf("cluster calls: loading the certificate of %s: %w", webConfigFile, err)
	}
	cfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if c.TLS.ClientCA == "" {
		return cfg, false, nil
	}
	pem, err := os.ReadFile(rel(c.TLS.ClientCA))
	if err != nil {
		return nil, false, fmt.Errorf("cluster calls: %w", err)
	}
	cfg.RootCAs = x509.NewCertPool()
	if !cfg.RootCAs.AppendCertsFromPEM(pem) {
		return nil, false, fmt.Errorf("cluster calls: %s holds no PEM certificate", rel(c.TLS.ClientCA))
	}
	return cfg, c.TLS.Auth == "RequireAndVerifyClientCert", nil
}

// StatusError is a peer's answer other than 2xx.
type StatusError struct {
	Peer   string
	Status int
	Msg    string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("replica %s answered %d: %s", e.Peer, e.Status, e.Msg)
}

// Do calls method path on peer with in as JSON (nil: no body) and decodes
// the reply into out (nil: ignored), within timeout.
func (c *Client) Do(ctx context.Context, peer, method, path string, timeout time.Duration, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.scheme+"://"+peer+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("replica %s: %w", peer, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return fmt.Errorf("replica %s: reading its answer: %w", peer, err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = string(bytes.TrimSpace(data))
		}
		return &StatusError{Peer: peer, Status: resp.StatusCode, Msg: e.Error}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return errors.Join(fmt.Errorf("replica %s: its answer does not decode; are both replicas the same inferprobe version?", peer), err)
	}
	return nil
}
