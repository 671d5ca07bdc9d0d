package tlsconfig

import (
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testpki"
)

func TestWriteTestPKI(t *testing.T) {
	dir := t.TempDir()
	ca, sc, sk, cc, ck, err := testpki.WriteTestPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	scfg, _, err := ServerConfig(sc, sk, "require", ca)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"localhost", "127.0.0.1", "::1"} {
		ccfg, err := ClientConfig(ca, name, cc, ck, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, serr, cerr := handshake(t, scfg, ccfg); serr != nil || cerr != nil {
			t.Fatalf("%s: server %v, client %v", name, serr, cerr)
		}
	}
}

// handshake runs a TLS handshake between the two configs over loopback TCP
// (an unbuffered net.Pipe can deadlock when both sides write an alert) and
// returns the server certificate the client saw and each side's error.
func handshake(t *testing.T, server, client *tls.Config) (served *x509.Certificate, serverErr, clientErr error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	sc.SetDeadline(deadline)
	cc.SetDeadline(deadline)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := tls.Server(sc, server)
		serverErr = s.Handshake()
		if serverErr == nil {
			// TLS 1.3 servers learn of a rejected client certificate only
			// when they read; a one-byte exchange settles both sides.
			buf := make([]byte, 1)
			if _, serverErr = s.Read(buf); serverErr == nil {
				_, serverErr = s.Write(buf)
			}
		}
		sc.Close()
	}()
	c := tls.Client(cc, client)
	clientErr = c.Handshake()
	if clientErr == nil {
		if _, clientErr = c.Write([]byte{1}); clientErr == nil {
			_, clientErr = c.Read(make([]byte, 1))
		}
		if st := c.ConnectionState(); len(st.PeerCertificates) > 0 {
			served = st.PeerCertificates[0]
		}
	}
	cc.Close()
	wg.Wait()
	return served, serverErr, clientErr
}

func clientFor(t *testing.T, p certs.Files, withCert bool) *tls.Config {
	t.Helper()
	cert, key := "", ""
	if withCert {
		cert, key = p.ClientCert, p.ClientKey
	}
	cfg, err := ClientConfig(p.CAFile, "localhost", cert, key, false)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func serial(t *testing.T, certFile string) *big.Int {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(certFile, strings.TrimSuffix(certFile, ".pem")+"-key.pem")
	if err != nil {
		t.Fatal(err)
	}
	return pair.Leaf.SerialNumber
}

func TestServerConfigServes(t *testing.T) {
	p := certs.New(t)
	scfg, r, err := ServerConfig(p.ServerCert, p.ServerKey, "none", "")
	if err != nil {
		t.Fatal(err)
	}
	if scfg.MinVersion != tls.VersionTLS12 {
		t.Fatalf("MinVersion %x", scfg.MinVersion)
	}
	served, serr, cerr := handshake(t, scfg, clientFor(t, p, false))
	if serr != nil || cerr != nil {
		t.Fatalf("handshake: server %v, client %v", serr, cerr)
	}
	if served.SerialNumber.Cmp(serial(t, p.ServerCert)) != 0 || r.Certificate().Leaf.SerialNumber.Cmp(served.SerialNumber) != 0 {
		t.Fatal("served certificate is not the configured one")
	}
	// TLS 1.1 is refused.
	old := clientFor(t, p, false)
	old.MaxVersion = tls.VersionTLS11
	if _, _, cerr := handshake(t, scfg, old); cerr == nil {
		t.Fatal("TLS 1.1 client accepted")
	}
}

func TestServerConfigReloadsCertificate(t *testing.T) {
	p := certs.New(t)
	scfg, r, err := ServerConfig(p.ServerCert, p.ServerKey, "none", "")
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(1_700_000_000, 0)
	r.mu.Lock()
	r.now = func() time.Time { return clock }
	r.lastCheck = clock
	r.mu.Unlock()
	var reported []error
	r.OnError(func(err error) { reported = append(reported, err) })

	first := serial(t, p.ServerCert)
	ca := p.CA
	if _, _, err := ca.WriteLeaf(p.Dir, "server", testpki.ServerLeaf()); err != nil {
		t.Fatal(err)
	}
	bump(t, p.ServerCert, p.ServerKey)
	second := serial(t, p.ServerCert)

	// Within the check interval the old certificate is still served.
	clock = clock.Add(DefaultCheckInterval / 2)
	if served, _, cerr := handshake(t, scfg, clientFor(t, p, false)); cerr != nil || served.SerialNumber.Cmp(first) != 0 {
		t.Fatalf("before the interval: %v, serial %v want %v", cerr, served, first)
	}
	// After it, the next handshake sees the new serial.
	clock = clock.Add(DefaultCheckInterval)
	served, _, cerr := handshake(t, scfg, clientFor(t, p, false))
	if cerr != nil || served.SerialNumber.Cmp(second) != 0 {
		t.Fatalf("after the interval: %v, serial %v want %v", cerr, served.SerialNumber, second)
	}

	// A mismatched pair (new certificate, old key) is refused and the
	// current one kept; the hook hears of it once.
	keyBefore, _ := os.ReadFile(p.ServerKey)
	if _, _, err := ca.WriteLeaf(p.Dir, "server", testpki.ServerLeaf()); err != nil {
		t.Fatal(err)
	}
	third := serial(t, p.ServerCert)
	if err := os.WriteFile(p.ServerKey, keyBefore, 0o600); err != nil {
		t.Fatal(err)
	}
	bump(t, p.ServerCert, p.ServerKey)
	for i := 0; i < 2; i++ {
		clock = clock.Add(2 * DefaultCheckInterval)
		served, _, cerr = handshake(t, scfg, clientFor(t, p, false))
		if cerr != nil || served.SerialNumber.Cmp(second) != 0 {
			t.Fatalf("after a bad pair: %v, serial %v want the kept %v", cerr, served.SerialNumber, second)
		}
	}
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), p.ServerCert) {
		t.Fatalf("reported %v, want one error naming %s", reported, p.ServerCert)
	}
	if strings.Contains(reported[0].Error(), "PRIVATE KEY") {
		t.Fatal("error shows key material")
	}
	// Once the key follows, the new pair is served.
	if _, _, err := ca.WriteLeaf(p.Dir, "server", testpki.ServerLeaf()); err != nil {
		t.Fatal(err)
	}
	bump(t, p.ServerCert, p.ServerKey)
	clock = clock.Add(2 * DefaultCheckInterval)
	served, _, cerr = handshake(t, scfg, clientFor(t, p, false))
	if cerr != nil || served.SerialNumber.Cmp(third) == 0 || served.SerialNumber.Cmp(serial(t, p.ServerCert)) != 0 {
		t.Fatalf("after the fix: %v, serial %v", cerr, served.SerialNumber)
	}

	// Reload loads at once, whatever the stamps, and returns its error
	// rather than passing it to the hook.
	fixed := r.Certificate()
	clientKey, _ := os.ReadFile(p.ClientKey)
	if err := os.WriteFile(p.ServerKey, clientKey, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(); err == nil || r.Certificate() != fixed || len(reported) != 1 {
		t.Fatalf("Reload of a mismatched pair: %v; certificate kept %v; %d reported", err, r.Certificate() == fixed, len(reported))
	}
	if _, _, err := ca.WriteLeaf(p.Dir, "server", testpki.ServerLeaf()); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(); err != nil || r.Certificate().Leaf.SerialNumber.Cmp(serial(t, p.ServerCert)) != 0 {
		t.Fatalf("Reload: %v", err)
	}
}

// TestServerConfigReloadRealClock uses the real one-second throttle.
func TestServerConfigReloadRealClock(t *testing.T) {
	p := certs.New(t)
	scfg, _, err := ServerConfig(p.ServerCert, p.ServerKey, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.CA.WriteLeaf(p.Dir, "server", testpki.ServerLeaf()); err != nil {
		t.Fatal(err)
	}
	bump(t, p.ServerCert, p.ServerKey)
	want := serial(t, p.ServerCert)
	time.Sleep(DefaultCheckInterval + 100*time.Millisecond)
	served, _, cerr := handshake(t, scfg, clientFor(t, p, false))
	if cerr != nil || served.SerialNumber.Cmp(want) != 0 {
		t.Fatalf("%v, serial %v want %v", cerr, served, want)
	}
}

func TestServerConfigClientAuth(t *testing.T) {
	p := certs.New(t)
	other := certs.New(t) // a client certificate from a CA the server does not trust
	strangerCfg, err := ClientConfig(p.CAFile, "localhost", other.ClientCert, other.ClientKey, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		policy                      string
		noCert, withCert, strangers bool // whether each client gets in
	}{
		{"none", true, true, true},
		{"request", true, true, false},
		{"require", false, true, false},
	} {
		ca := p.CAFile
		if tc.policy == "none" {
			ca = ""
		}
		scfg, _, err := ServerConfig(p.ServerCert, p.ServerKey, tc.policy, ca)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			cfg  *tls.Config
			ok   bool
		}{{"no cert", clientFor(t, p, false), tc.noCert}, {"cert", clientFor(t, p, true), tc.withCert}, {"stranger", strangerCfg, tc.strangers}} {
			_, serr, cerr := handshake(t, scfg, c.cfg)
			if ok := serr == nil && cerr == nil; ok != c.ok {
				t.Errorf("%s / %s: server %v, client %v; want ok=%v", tc.policy, c.name, serr, cerr, c.ok)
			}
		}
	}
}

func TestServerConfigReloadsClientCA(t *testing.T) {
	p := certs.New(t)
	other := certs.New(t)
	scfg, r, err := ServerConfig(p.ServerCert, p.ServerKey, "require", p.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.interval = 0
	r.mu.Unlock()
	strangerCfg, _ := ClientConfig(p.CAFile, "localhost", other.ClientCert, other.ClientKey, false)
	if _, serr, _ := handshake(t, scfg, strangerCfg); serr == nil {
		t.Fatal("stranger accepted before the CA change")
	}
	// Trust the other CA instead.
	caPEM, _ := os.ReadFile(other.CAFile)
	if err := os.WriteFile(p.CAFile, caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	bump(t, p.CAFile)
	if _, serr, cerr := handshake(t, scfg, strangerCfg); serr != nil || cerr != nil {
		t.Fatalf("after the CA change: server %v, client %v", serr, cerr)
	}
	if _, serr, _ := handshake(t, scfg, clientFor(t, p, true)); serr == nil {
		t.Fatal("client of the dropped CA still accepted")
	}
}

func TestServerConfigErrors(t *testing.T) {
	p := certs.New(t)
	empty := filepath.Join(p.Dir, "empty.pem")
	os.WriteFile(empty, []byte("not pem\n"), 0o644)
	for name, tc := range map[string]struct {
		cert, key, auth, ca, want string
	}{
		"no cert":        {"", p.ServerKey, "none", "", "both a certificate file and a key file"},
		"missing cert":   {filepath.Join(p.Dir, "nope.pem"), p.ServerKey, "none", "", "nope.pem"},
		"mismatched key": {p.ServerCert, p.ClientKey, "none", "", p.ServerCert},
		"bad policy":     {p.ServerCert, p.ServerKey, "optional", "", `"optional"`},
		"require no CA":  {p.ServerCert, p.ServerKey, "require", "", "needs a client CA file"},
		"request no CA":  {p.ServerCert, p.ServerKey, "request", "", "needs a client CA file"},
		"CA without PEM": {p.ServerCert, p.ServerKey, "require", empty, "no PEM certificate"},
	} {
		_, _, err := ServerConfig(tc.cert, tc.key, tc.auth, tc.ca)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want it to say %q", name, err, tc.want)
		}
	}
}

func TestClientConfig(t *testing.T) {
	p := certs.New(t)
	scfg, _, err := ServerConfig(p.ServerCert, p.ServerKey, "require", p.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, serr, cerr := handshake(t, scfg, clientFor(t, p, true)); serr != nil || cerr != nil {
		t.Fatalf("mTLS: server %v, client %v", serr, cerr)
	}
	open, _, _ := ServerConfig(p.ServerCert, p.ServerKey, "none", "")
	// Wrong name.
	wrong, _ := ClientConfig(p.CAFile, "kafka.example", "", "", false)
	if _, _, cerr := handshake(t, open, wrong); cerr == nil {
		t.Fatal("wrong server name accepted")
	}
	// System roots do not know the test CA.
	sys, _ := ClientConfig("", "localhost", "", "", false)
	if sys.RootCAs != nil {
		t.Fatal("RootCAs set without a CA file")
	}
	if _, _, cerr := handshake(t, open, sys); cerr == nil {
		t.Fatal("test CA trusted through the system roots")
	}
	// Insecure skips verification.
	insecure, _ := ClientConfig("", "", "", "", true)
	if _, _, cerr := handshake(t, open, insecure); cerr != nil {
		t.Fatalf("insecure: %v", cerr)
	}
	if c, _ := ClientConfig(p.CAFile, "", "", "", false); c.MinVersion != tls.VersionTLS12 {
		t.Fatal("client MinVersion")
	}
	for name, args := range map[string][4]string{
		"cert without key": {p.CAFile, "", p.ClientCert, ""},
		"key without cert": {p.CAFile, "", "", p.ClientKey},
		"missing CA":       {filepath.Join(p.Dir, "nope.pem"), "", "", ""},
		"mismatched pair":  {p.CAFile, "", p.ClientCert, p.ServerKey},
	} {
		if _, err := ClientConfig(args[0], args[1], args[2], args[3], false); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// bump moves the files' modification times forward, so that a change is
// seen even on file systems with coarse timestamps.
func bump(t *testing.T, files ...string) {
	t.Helper()
	later := time.Now().Add(time.Duration(len(files)) * time.Second)
	for _, f := range files {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
}
