package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCert writes a certificate for 127.0.0.1 signed by ca (self-signed
// CA when ca is nil) and its key, and returns them.
func writeCert(t *testing.T, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	if ca == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
		ca, caKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	keyDER, _ := x509.MarshalECPrivateKey(key)
	_ = os.WriteFile(filepath.Join(dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	return cert, key
}

// TestClientTLS: from a --web.config.file serving TLS, the client presents
// the replica's certificate and trusts client_ca_file, so a peer requiring
// client certificates from that CA accepts it, with the token; paths are
// relative to the file.
func TestClientTLS(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := writeCert(t, dir, "ca", nil, nil)
	writeCert(t, dir, "replica", ca, caKey)
	config := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(config, []byte("tls_server_config:\n  cert_file: replica.crt\n  key_file: replica.key\n  client_ca_file: ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tlsConfig, mutual, err := ClientTLS(config)
	if err != nil || !mutual {
		t.Fatalf("ClientTLS: mutual %v, %v; want mutual TLS", mutual, err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, `{"error":"who are you"}`, http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"shard":1}`))
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, Certificates: tlsConfig.Certificates}
	srv.StartTLS()
	defer srv.Close()
	peer := strings.TrimPrefix(srv.URL, "https://")

	var got struct{ Shard int }
	if err := NewClient("tok", tlsConfig).Do(context.Background(), peer, http.MethodGet, "/x", 5*time.Second, nil, &got); err != nil || got.Shard != 1 {
		t.Fatalf("call with the replica's certificate and token: %+v, %v", got, err)
	}
	var se *StatusError
	if err := NewClient("wrong", tlsConfig).Do(context.Background(), peer, http.MethodGet, "/x", 5*time.Second, nil, nil); !errors.As(err, &se) || se.Status != 401 || se.Msg != "who are you" {
		t.Errorf("call with a wrong token: %v, want the peer's 401 and its message", err)
	}
	if err := NewClient("tok", nil).Do(context.Background(), peer, http.MethodGet, "/x", 5*time.Second, nil, nil); err == nil {
		t.Error("a plain-HTTP client reached a TLS peer")
	}

	noCA := filepath.Join(dir, "noca.yml")
	_ = os.WriteFile(noCA, []byte("tls_server_config:\n  cert_file: replica.crt\n  key_file: replica.key\n"), 0o600)
	if c, mutual, err := ClientTLS(noCA); c == nil || mutual || err != nil {
		t.Errorf("TLS without client_ca_file: %v, mutual %v, %v; want TLS that does not authenticate the caller", c, mutual, err)
	}
	if c, mutual, err := ClientTLS(""); c != nil || mutual || err != nil {
		t.Errorf("no web config: %v, %v, %v; want plain HTTP", c, mutual, err)
	}
}
