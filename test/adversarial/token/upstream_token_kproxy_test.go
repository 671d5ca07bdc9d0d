package token

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/idp"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// upstreamTokenClientSecret is kproxy's client secret at the test identity
// provider: what must never reach kproxy's log.
const upstreamTokenClientSecret = "kproxy-client-secret-4f9c2e"

// upstreamTokenIdP starts the identity provider with kproxy as a client.
func upstreamTokenIdP(t *testing.T, lifetime time.Duration) *idp.IdP {
	t.Helper()
	return idp.StartTest(t, idp.Options{Audience: "kafka", TokenLifetime: lifetime,
		Clients: map[string]idp.Client{"kproxy": {Secret: upstreamTokenClientSecret}}})
}

// upstreamTokenBroker is the upstream that validates kproxy's tokens (kfake
// has no OAUTHBEARER): a kproxy terminating OAUTHBEARER with the provider's
// JWKS in front of kfake. It returns its bootstrap address.
func upstreamTokenBroker(t *testing.T, p *idp.IdP) string {
	t.Helper()
	return advkit.Start(t, oauthConfig(advkit.Kfake(t, 1)[0], testkit.TerminateOAuthBearer(p.JWKSURL(), p.Issuer()), "")).Bootstrap
}

// upstreamTokenConfig is the configuration of a kproxy logging in to
// upstream with OAUTHBEARER, its token from p.
func upstreamTokenConfig(upstream string, p *idp.IdP) string {
	return fmt.Sprintf(`
upstream:
  bootstrap_servers: [%q]
  sasl: {mechanism: OAUTHBEARER, token_endpoint: %q, client_id: kproxy, client_secret: %q, scope: kafka}
listeners: {bind_host: 127.0.0.1}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
`, upstream, p.TokenURL(), upstreamTokenClientSecret)
}

// capturedKproxy is the real binary run with its stdout and stderr both
// captured (advkit.Start leaves stderr to the test's).
type capturedKproxy struct {
	cmd       *exec.Cmd
	Output    *logbuf.Buffer // every byte it wrote to stdout and stderr
	Bootstrap string
}

// startCapturedKproxy runs the binary with cfg and returns once its log
// names the bootstrap listener's address.
func startCapturedKproxy(t *testing.T, cfg string) *capturedKproxy {
	t.Helper()
	out := &logbuf.Buffer{}
	cmd := exec.Command(testkit.SharedKproxy(t), "--config", testkit.WriteConfig(t, cfg))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start kproxy: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	k := &capturedKproxy{cmd: cmd, Output: out}
	k.waitOutput(t, "the bootstrap listener's address", func(l testkit.LogLine) bool {
		if l["listener"] == "bootstrap" {
			k.Bootstrap, _ = l["addr"].(string)
		}
		return k.Bootstrap != ""
	})
	return k
}

// waitOutput waits up to 30 seconds for a JSON log line match accepts.
func (k *capturedKproxy) waitOutput(t *testing.T, what string, match func(testkit.LogLine) bool) testkit.LogLine {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, raw := range strings.Split(k.Output.String(), "\n") {
			var l testkit.LogLine
			if json.Unmarshal([]byte(raw), &l) == nil && match(l) {
				return l
			}
		}
	}
	t.Fatalf("no kproxy log line for %s within 30s; output:\n%s", what, k.Output.String())
	return nil
}

// stop ends kproxy with SIGTERM and waits for it to exit, so that its
// output is complete.
func (k *capturedKproxy) stop(t *testing.T) {
	t.Helper()
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { k.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(40 * time.Second):
		t.Fatal("kproxy did not exit within 40s of SIGTERM")
	}
}
