package engine

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
	"github.com/kproxy/kproxy/internal/testpki"
)

const certExpiryMetric = "kproxy_tls_certificate_expiry_timestamp_seconds"

// Every listener certificate (port-per-broker TLS, the SNI listener's own
// and its further ones) has one expiry series, logged at start; when a
// certificate on disk is replaced the next handshake loads it, the log
// says so with the new serial and the series follows: the old serial's
// goes away.
func TestListenerCertificateExpiry(t *testing.T) {
	p := certs.New(t)
	sniCert, sniKey, err := p.CA.WriteLeaf(p.Dir, "sni", testpki.Leaf{CommonName: "sni", DNSNames: []string{"*.kafka.test"}, Server: true, NotAfter: time.Now().Add(72 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	extraCert, extraKey, err := p.CA.WriteLeaf(p.Dir, "extra", testpki.Leaf{CommonName: "extra", DNSNames: []string{"*.other.test"}, Server: true, NotAfter: time.Now().Add(10 * 24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var logs logbuf.Buffer
	reg := prometheus.NewRegistry()
	s := startServer(t, fmt.Sprintf(`
upstream: {bootstrap_servers: [%q]}
listeners:
  bind_host: 127.0.0.1
  bootstrap_port: 0
  tls: {cert_file: %s, key_file: %s}
  sni:
    bind_host: 127.0.0.1
    port: 0
    bootstrap_host: bootstrap.kafka.test
    broker_host_pattern: b$(node_id).kafka.test
    tls: {cert_file: %s, key_file: %s}
    certificates: [{cert_file: %s, key_file: %s}]
`, silentUpstream(t), p.ServerCert, p.ServerKey, sniCert, sniKey, extraCert, extraKey), zerolog.New(&logs), reg)

	want := map[string]*x509.Certificate{
		"listeners.tls":                 leafOf(t, p.ServerCert),
		"listeners.sni.tls":             leafOf(t, sniCert),
		"listeners.sni.certificates[0]": leafOf(t, extraCert),
	}
	checkExpirySeries(t, reg, want)
	for key, leaf := range want {
		if !loggedCertificate(t, &logs, "listener certificate loaded", key, leaf) {
			t.Errorf("no log line says %s's certificate (serial %s) was loaded:\n%s", key, leaf.SerialNumber.Text(16), logs.String())
		}
	}

	// Replace the port-per-broker certificate; handshakes load it once the
	// reloader's check interval has passed.
	if _, _, err := p.CA.WriteLeaf(p.Dir, "server", testpki.Leaf{CommonName: "renewed", IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, Server: true, NotAfter: time.Now().Add(36 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	renewed := leafOf(t, p.ServerCert)
	waitAdmission(t, func() bool {
		return servedSerial(t, s.BootstrapAddr(), p.Pool()) == renewed.SerialNumber.Text(16)
	}, func() string { return "the bootstrap listener still serves the replaced certificate" })
	want["listeners.tls"] = renewed
	checkExpirySeries(t, reg, want)
	if !loggedCertificate(t, &logs, "listener certificate reloaded", "listeners.tls", renewed) {
		t.Errorf("no log line names the reloaded certificate's serial %s:\n%s", renewed.SerialNumber.Text(16), logs.String())
	}
}

// leafOf parses the first certificate of a PEM file.
func leafOf(t *testing.T, file string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s holds no PEM block", file)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkExpirySeries checks that the expiry gauge has exactly one series
// per listener certificate: its serial, valued at its notAfter.
func checkExpirySeries(t *testing.T, reg *prometheus.Registry, want map[string]*x509.Certificate) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got, n := map[string]string{}, 0
	for _, f := range families {
		if f.GetName() != certExpiryMetric {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			n++
			got[labels["certificate"]] = fmt.Sprintf("%s@%d", labels["serial"], int64(m.GetGauge().GetValue()))
		}
	}
	if n != len(want) {
		t.Errorf("%s has %d series %v, want one for each of %d certificates", certExpiryMetric, n, got, len(want))
	}
	for key, leaf := range want {
		if w := fmt.Sprintf("%s@%d", leaf.SerialNumber.Text(16), leaf.NotAfter.Unix()); got[key] != w {
			t.Errorf("%s{certificate=%q} = %q (serial@notAfter), want %q", certExpiryMetric, key, got[key], w)
		}
	}
}

// loggedCertificate reports whether a log line with message msg names the
// certificate of listener key: its serial, subject and notAfter.
func loggedCertificate(t *testing.T, logs *logbuf.Buffer, msg, key string, leaf *x509.Certificate) bool {
	t.Helper()
	for _, l := range logs.Lines(t) {
		if l["message"] == msg && l["certificate"] == key && l["serial"] == leaf.SerialNumber.Text(16) &&
			l["subject"] == leaf.Subject.String() && l["not_after"] == leaf.NotAfter.UTC().Format(time.RFC3339) {
			return true
		}
	}
	return false
}

// servedSerial is the serial of the certificate a TLS handshake with addr
// is served ("" if the handshake fails).
func servedSerial(t *testing.T, addr string, roots *x509.CertPool) string {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, &tls.Config{ServerName: "127.0.0.1", RootCAs: roots})
	if err != nil {
		return ""
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.Text(16)
}
