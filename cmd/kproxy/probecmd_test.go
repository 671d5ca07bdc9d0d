package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestProbeExitCodes: kproxy probe exits 0 on a 2xx answer and 1 on a
// 5xx answer, a refused connection or an answer slower than --timeout.
func TestProbeExitCodes(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz":
			w.WriteHeader(http.StatusOK)
		case "/slow":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	defer close(release)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"2xx", []string{srv.URL + "/readyz"}, 0, ""},
		{"503", []string{srv.URL + "/down"}, 1, "503"},
		{"refused", []string{closed.URL + "/readyz"}, 1, "refused"},
		{"timeout", []string{"--timeout", "100ms", srv.URL + "/slow"}, 1, "deadline"},
		{"no url", nil, 2, "usage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			start := time.Now()
			code := runArgs(append([]string{"probe"}, tc.args...), &stdout, &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.says) {
				t.Errorf("exit %d stderr %q, want %d saying %q", code, stderr.String(), tc.code, tc.says)
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
		})
	}
}
