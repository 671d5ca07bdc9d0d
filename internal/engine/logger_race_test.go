package engine

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// plainAuthenticated is an Authenticator that has just completed a PLAIN
// exchange for alice.
func plainAuthenticated(t *testing.T) *auth.Authenticator {
	t.Helper()
	cred, err := auth.HashPassword(auth.ScramSHA256, "alice-secret", auth.MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	store, err := auth.NewStore([]auth.User{{Name: "alice", Credentials: []string{cred}}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.NewAuthenticator(auth.Options{Mechanisms: []string{auth.Plain}, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if hs := a.Handshake(&kmsg.SASLHandshakeRequest{Version: 1, Mechanism: auth.Plain}); hs.ErrorCode != 0 {
		t.Fatalf("handshake: error %d", hs.ErrorCode)
	}
	if _, done, err := a.Authenticate(&kmsg.SASLAuthenticateRequest{Version: 1, SASLAuthBytes: []byte("\x00alice\x00alice-secret")}); err != nil || !done {
		t.Fatalf("authenticate: done %v, %v", done, err)
	}
	return a
}

// TestPairLoggerAuthenticateRacesClose: the request loop adds the user to
// the pair's logger when the client authenticates, while close may run on
// another goroutine at the same moment (the handshake timer firing, the
// response loop failing, Shutdown giving up). Run with -race: before the
// logger was behind an atomic pointer this was a data race on pair.log.
func TestPairLoggerAuthenticateRacesClose(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader(`
upstream: {bootstrap_servers: ["127.0.0.1:1"]}
listeners: {bind_host: 127.0.0.1}
`))
	if err != nil {
		t.Fatal(err)
	}
	var logs logbuf.Buffer
	s := New(cfg, zerolog.New(&logs), prometheus.NewRegistry())
	for range 20 {
		client, server := net.Pipe()
		p := newPair(s, server, bootstrapNode, "bootstrap")
		stage := &terminateAuth{saslProgress: saslProgress{p: p}, authn: plainAuthenticated(t)}
		p.auth = stage
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); <-start; stage.loggedIn() }()
		go func() { defer wg.Done(); <-start; p.close(fail(reasonAuth, errors.New("handshake timer"))) }()
		close(start)
		wg.Wait()
		client.Close()
		if p.conn.User != "alice" {
			t.Fatalf("user %q after authentication", p.conn.User)
		}
	}
	if !strings.Contains(logs.String(), `"reason":"sasl_failed"`) {
		t.Fatalf("close logged no reason:\n%s", logs.String())
	}
}
