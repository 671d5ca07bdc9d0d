package e2esni

import (
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testpki"
)

// TestSNICertificatePerName: listeners.sni.certificates pairs are served
// to the names they cover, tls.cert_file to the rest, and a pair replaced
// on disk is served from the next handshakes on.
func TestSNICertificatePerName(t *testing.T) {
	t.Parallel()
	cluster := testkit.Cluster(t, 3)
	p := newPKI(t)
	dir := t.TempDir()
	issue := func(cn string) (string, string) {
		cert, key, err := p.CA.WriteLeaf(dir, "broker-1", testpki.Leaf{CommonName: cn, DNSNames: []string{"broker-1." + domain}, Server: true})
		if err != nil {
			t.Fatal(err)
		}
		return cert, key
	}
	cert, key := issue("broker-1 first")
	px := kproxytest.Start(t, sniYAML(cluster, p, yamlOpts{
		sni: "    certificates: [{cert_file: " + cert + ", key_file: " + key + "}]",
	}))
	servedCN := func(name string) string {
		t.Helper()
		cfg := clientTLS(p)
		cfg.ServerName = name
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", px.SNIAddr(), cfg)
		if err != nil {
			t.Fatalf("handshake naming %s: %v", name, err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	if cn := servedCN("broker-1." + domain); cn != "broker-1 first" {
		t.Errorf("broker-1 was served %q, want its own certificate", cn)
	}
	for _, name := range []string{"broker-0." + domain, bootstrapHost} {
		if cn := servedCN(name); cn != "*."+domain {
			t.Errorf("%s was served %q, want the wildcard", name, cn)
		}
	}

	// Replace the pair on disk (same files): the next handshakes get it.
	newCert, newKey := issue("broker-1 second")
	if newCert != cert || newKey != key {
		t.Fatalf("reissued to %s/%s, not the served files", newCert, newKey)
	}
	later := time.Now().Add(2 * time.Second) // a new mtime even on coarse clocks
	for _, f := range []string{filepath.Clean(cert), filepath.Clean(key)} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	if !waitFor(5*time.Second, func() bool { return servedCN("broker-1."+domain) == "broker-1 second" }) {
		t.Errorf("the replaced certificate of broker-1 was not served")
	}
}
