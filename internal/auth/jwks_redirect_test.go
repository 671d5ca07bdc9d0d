package auth

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveIdPKeys copies the provider's JWKS to w.
func serveIdPKeys(t *testing.T, jwksURL string, w http.ResponseWriter) {
	resp, err := http.Get(jwksURL)
	if err != nil {
		t.Error(err)
		return
	}
	defer resp.Body.Close()
	_, _ = io.Copy(w, resp.Body)
}

// TestKeySetRedirectsStayOnHostAndHTTPS: the keys decide who may log in,
// so a JWKS fetch follows a redirect within jwks_url's host, but not one
// to another host (whoever runs the redirecting endpoint would choose the
// keys) nor one from https to http (anyone on the path would).
func TestKeySetRedirectsStayOnHostAndHTTPS(t *testing.T) {
	p := startIdP(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/keys", http.StatusFound) })
	mux.HandleFunc("/keys", func(w http.ResponseWriter, _ *http.Request) { serveIdPKeys(t, p.JWKSURL(), w) })
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, p.JWKSURL(), http.StatusFound) // another port: another host
	})
	plain := httptest.NewServer(mux)
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.Host+"/keys", http.StatusFound)
	}))
	t.Cleanup(tlsSrv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	same, err := NewKeySet(JWKSOptions{URL: plain.URL + "/moved", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := same.Refresh(context.Background()); err != nil {
		t.Fatalf("a redirect within the host: %v", err)
	}
	fetchesBefore := p.JWKSFetches()
	for _, c := range []struct{ name, url, caFile, reason string }{
		{"another host", plain.URL + "/elsewhere", "", "redirects to another host"},
		{"https to http", tlsSrv.URL + "/jwks", caFile, "from https to http"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ks, err := NewKeySet(JWKSOptions{URL: c.url, CAFile: c.caFile, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			err = ks.Refresh(context.Background())
			if !errors.Is(err, errJWKSRedirect) || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("refresh: %v, want a refused redirect saying %q", err, c.reason)
			}
			if n, _, _ := ks.Status(); n != 0 {
				t.Fatalf("%d keys held", n)
			}
		})
	}
	if n := p.JWKSFetches() - fetchesBefore; n != 0 {
		t.Fatalf("the provider's JWKS was fetched %d times through refused redirects", n)
	}
}

// TestKeySetRedirectToAllowedHost: a redirect to a host listed in
// AllowedRedirectHosts is followed (by name alone, any port, or by
// host:port); one to a host:port not listed is not.
func TestKeySetRedirectToAllowedHost(t *testing.T) {
	p := startIdP(t)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// localhost is another host than jwks_url's 127.0.0.1.
		http.Redirect(w, r, strings.Replace(p.JWKSURL(), "127.0.0.1", "localhost", 1), http.StatusFound)
	}))
	t.Cleanup(redirector.Close)
	jwks, err := url.Parse(p.JWKSURL())
	if err != nil {
		t.Fatal(err)
	}
	port := jwks.Port()
	for _, c := range []struct {
		allowed []string
		ok      bool
	}{
		{[]string{"localhost"}, true},
		{[]string{"LOCALHOST:" + port}, true},
		{[]string{"localhost:1"}, false},
		{[]string{"127.0.0.1"}, false},
		{nil, false},
	} {
		ks, err := NewKeySet(JWKSOptions{URL: redirector.URL, Timeout: 5 * time.Second, AllowedRedirectHosts: c.allowed})
		if err != nil {
			t.Fatal(err)
		}
		err = ks.Refresh(context.Background())
		if c.ok && err != nil {
			t.Errorf("allowed %q: %v", c.allowed, err)
		}
		if !c.ok && !errors.Is(err, errJWKSRedirect) {
			t.Errorf("allowed %q: %v, want the redirect refused", c.allowed, err)
		}
	}
}
