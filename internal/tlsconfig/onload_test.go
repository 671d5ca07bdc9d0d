package tlsconfig

import (
	"crypto/tls"
	"os"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testpki"
)

// TestReloaderOnLoad: the hook hears of every pair loaded after the first,
// with the one it replaced, and not of a pair that failed to load.
func TestReloaderOnLoad(t *testing.T) {
	p := certs.New(t)
	_, r, err := ServerConfig(p.ServerCert, p.ServerKey, "", "")
	if err != nil {
		t.Fatal(err)
	}
	type load struct{ previous, current *tls.Certificate }
	var loads []load
	r.OnLoad(func(previous, current *tls.Certificate) { loads = append(loads, load{previous, current}) })
	first := r.Certificate()

	if _, _, err := p.CA.WriteLeaf(p.Dir, "server", testpki.ServerLeaf()); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if len(loads) != 1 || loads[0].previous != first || loads[0].current != r.Certificate() ||
		loads[0].current.Leaf.SerialNumber.Cmp(serial(t, p.ServerCert)) != 0 {
		t.Fatalf("after a reload the hook heard %+v, want the first pair replaced by the new one", loads)
	}

	// A key that does not match: no load, so the hook hears nothing.
	clientKey, err := os.ReadFile(p.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.ServerKey, clientKey, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(); err == nil || len(loads) != 1 {
		t.Fatalf("reload of a mismatched pair: %v, hook heard %d loads, want 1", err, len(loads))
	}
}
