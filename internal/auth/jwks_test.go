package auth

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/idp"
)

func TestKeySetRefreshesOnUnknownKIDRateLimited(t *testing.T) {
	p := startIdP(t)
	clock := &fakeClock{t: time.Now()}
	ks, err := NewKeySet(JWKSOptions{URL: p.JWKSURL(), Timeout: 2 * time.Second, MinRefreshInterval: 10 * time.Second, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	if err := ks.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The first unknown kid refreshes (fetch 2) and is still unknown.
	if _, err := ks.Key(context.Background(), "made-up"); !errors.Is(err, ErrUnknownKeyID) || !strings.Contains(err.Error(), "also after refreshing") {
		t.Fatalf("made-up kid: %v", err)
	}
	oldKID := p.CurrentKID()
	p.Rotate()
	// Within the interval, unknown kids (the new one included) do not refetch.
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := ks.Key(context.Background(), "made-up"); !errors.Is(err, ErrUnknownKeyID) {
				t.Errorf("made-up kid: %v", err)
			}
		}()
	}
	wg.Wait()
	if _, err := ks.Key(context.Background(), p.CurrentKID()); !errors.Is(err, ErrUnknownKeyID) {
		t.Fatalf("new kid found without a refresh: %v", err)
	}
	if n := p.JWKSFetches(); n != 2 {
		t.Fatalf("%d JWKS fetches within the rate limit, want 2", n)
	}
	// A scheduled refresh does not count against the limit, nor reset it.
	clock.t = clock.t.Add(10 * time.Second)
	if err := ks.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.Rotate()
	if _, err := ks.Key(context.Background(), p.CurrentKID()); err != nil {
		t.Fatalf("new kid after the interval: %v", err)
	}
	if _, err := ks.Key(context.Background(), oldKID); err != nil {
		t.Fatalf("previous key dropped while still published: %v", err)
	}
	for range 5 {
		ks.Key(context.Background(), "made-up")
	}
	if n := p.JWKSFetches(); n != 4 {
		t.Fatalf("%d JWKS fetches, want 4", n)
	}
}

func TestKeySetUnreachableOrJunkKeepsKeysAndBoundsWaiting(t *testing.T) {
	p := startIdP(t)
	var mu sync.Mutex
	mode := "good"
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		m := mode
		mu.Unlock()
		switch m {
		case "good":
			resp, err := http.Get(p.JWKSURL())
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			buf := make([]byte, 64<<10)
			n, _ := resp.Body.Read(buf)
			w.Write(buf[:n])
		case "hang":
			<-release
		case "junk":
			w.Write([]byte("<html>gateway error</html>"))
		case "empty set":
			w.Write([]byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"},{"kty":"XYZ"}]}`))
		case "huge":
			chunk := []byte(strings.Repeat(" ", 64<<10))
			for range 64 { // 4 MiB of whitespace
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "500":
			http.Error(w, "down", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: srv.Close waits for handlers
	ks, err := NewKeySet(JWKSOptions{URL: srv.URL, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := ks.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	kid := p.CurrentKID()
	for _, m := range []string{"hang", "junk", "empty set", "huge", "500"} {
		mu.Lock()
		mode = m
		mu.Unlock()
		start := time.Now()
		_, err := ks.Key(context.Background(), "unknown")
		if !errors.Is(err, ErrUnknownKeyID) || !strings.Contains(err.Error(), "refreshing the keys failed") {
			t.Errorf("%s: %v", m, err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s: a login waited %s, timeout 300ms", m, took)
		}
		if keys, err := ks.Key(context.Background(), kid); err != nil || len(keys) != 1 {
			t.Errorf("%s: the good key is gone: %v", m, err)
		}
		if n, _, lastErr := ks.Status(); n != 1 || lastErr == nil {
			t.Errorf("%s: status %d keys, last error %v", m, n, lastErr)
		}
	}
	// A cancelled login stops waiting for a fetch under way.
	mu.Lock()
	mode = "hang"
	mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := ks.Key(ctx, "unknown"); err == nil || time.Since(start) > 250*time.Millisecond {
		t.Errorf("cancelled wait: %v after %s", err, time.Since(start))
	}
}

func TestKeySetRunRefreshesOnSchedule(t *testing.T) {
	p := startIdP(t)
	var fetches atomic.Int64
	ks, err := NewKeySet(JWKSOptions{URL: p.JWKSURL(), Timeout: time.Second, RefreshInterval: 50 * time.Millisecond, MinRefreshInterval: time.Hour,
		OnFetch: func(keys int, err error) {
			if err == nil && keys > 0 {
				fetches.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ks.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.Rotate()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ks.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(5 * time.Second)
	for ks.lookup(p.CurrentKID()) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the scheduled refresh never fetched the new key")
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.RetireOld()
	for {
		// OnFetch is called after the keys are stored: wait for both.
		if n, _, _ := ks.Status(); n == 1 && fetches.Load() >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the scheduled refresh never dropped the retired key")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if fetches.Load() < 3 {
		t.Fatalf("OnFetch heard of %d fetches", fetches.Load())
	}
}

func TestKeySetFromFile(t *testing.T) {
	p := startIdP(t)
	resp, err := http.Get(p.JWKSURL())
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 64<<10)
	n, _ := resp.Body.Read(body)
	resp.Body.Close()
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, body[:n], 0o600); err != nil {
		t.Fatal(err)
	}
	ks, err := NewKeySet(JWKSOptions{File: path, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	v := newTestValidator(t, p, ks, nil)
	if _, err := v.Validate(context.Background(), p.Mint(map[string]any{"sub": "alice"})); err != nil {
		t.Fatal(err)
	}
	if _, err := NewKeySet(JWKSOptions{File: path, URL: "http://x", Timeout: time.Second}); err == nil {
		t.Fatal("both a file and a URL accepted")
	}
}

func TestParseJWKSKeepsOnlyPublicSignatureKeys(t *testing.T) {
	p, err := idp.Start(idp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pub := string(p.PublicKeyJSON())
	enc := strings.Replace(pub, `"use":"sig"`, `"use":"enc"`, 1)
	noKID := strings.Replace(pub, `"kid":"`+p.CurrentKID()+`"`, `"kid":"other"`, 1)
	doc := `{"keys":[` + pub + `,` + enc + `,{"kty":"oct","kid":"h","k":"c2VjcmV0"},{"kty":"EC","crv":"P-999"},` + noKID + `]}`
	keys, err := parseJWKS([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || len(keys[p.CurrentKID()]) != 1 || len(keys["other"]) != 1 || keys["h"] != nil {
		t.Fatalf("kept %v", keys)
	}
	if _, err := parseJWKS([]byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`)); err == nil {
		t.Fatal("a set of only a symmetric key accepted")
	}
	if _, err := parseJWKS([]byte(`{"keys":[` + strings.Repeat(pub+",", maxJWKSKeys) + pub + `]}`)); err == nil {
		t.Fatal("too many keys accepted")
	}
}

// TestKeySetCAFile: a JWKS served over HTTPS by a provider behind a private
// CA is fetched, and its keys verify tokens, when CAFile names that CA;
// with the system roots the fetch fails on the certificate and no key is
// held.
func TestKeySetCAFile(t *testing.T) {
	pki := certs.New(t)
	p, err := idp.Start(idp.Options{Audience: "kafka", TLSCA: pki.CA})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	token := p.Mint(map[string]any{"sub": "alice"})

	// A TLS handshake under -race on a loaded machine can take seconds;
	// the timeout is not what this test is about.
	ks, err := NewKeySet(JWKSOptions{URL: p.JWKSURL(), CAFile: pki.CAFile, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := ks.Refresh(context.Background()); err != nil {
		t.Fatalf("fetch from %s trusting the test CA: %v", p.JWKSURL(), err)
	}
	if _, err := newTestValidator(t, p, ks, nil).Validate(context.Background(), token); err != nil {
		t.Fatalf("token verified with keys fetched over https: %v", err)
	}

	roots, err := NewKeySet(JWKSOptions{URL: p.JWKSURL(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = roots.Refresh(context.Background())
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("fetch with the system roots: %v, want x509.UnknownAuthorityError", err)
	}
	if n, _, _ := roots.Status(); n != 0 {
		t.Fatalf("%d keys held after a failed fetch", n)
	}

	for _, bad := range []JWKSOptions{
		{File: pki.CAFile, CAFile: pki.CAFile},                             // a file is not fetched
		{URL: p.JWKSURL(), CAFile: pki.CAFile, Client: http.DefaultClient}, // a given client has its own roots
		{URL: p.JWKSURL(), CAFile: filepath.Join(t.TempDir(), "none.pem")},
	} {
		bad.Timeout = time.Second
		if _, err := NewKeySet(bad); err == nil {
			t.Errorf("NewKeySet(%+v) accepted", bad)
		}
	}
}
