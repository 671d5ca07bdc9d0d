package observability

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testpki"
)

// securityMetrics are the series only a kproxy with a TLS listener, SASL
// logins, OAUTHBEARER and quotas exports (kproxy_quota_ is a prefix):
// TestAlertsFire checks the dashboard expressions and alert selectors
// that use them against such a kproxy,
// TestDashboardAndAlertsAgainstPrometheus all the others.
var securityMetrics = []string{
	"kproxy_sasl_authentications_total", "kproxy_tls_handshake_failures_total",
	"kproxy_tls_certificate_expiry_timestamp_seconds", "kproxy_oauth_jwks_fetches_total", "kproxy_quota_",
}

// needsSecurity reports whether expr uses one of securityMetrics.
func needsSecurity(expr string) bool {
	return slices.ContainsFunc(securityMetrics, func(m string) bool { return strings.Contains(expr, m) })
}

// securityRules are the rules that use securityMetrics (want true) or
// those that do not (want false).
func securityRules(want bool) func(alertRule) bool {
	return func(r alertRule) bool { return needsSecurity(r.Expr) == want }
}

// securityPanels are the dashboard expressions that use securityMetrics
// (want true) or those that do not (want false).
func securityPanels(all []expression, want bool) []expression {
	var out []expression
	for _, e := range all {
		if needsSecurity(e.expr) == want {
			out = append(out, e)
		}
	}
	return out
}

// TestAlertsFire: a real Prometheus scrapes kproxy as the chart's
// ServiceMonitor has it scraped (job "kproxy") and evaluates the committed
// rules, their for: durations shortened. kproxy serves TLS with a
// certificate that expires in 36 hours, terminates SASL and has an
// OAUTHBEARER key set it cannot fetch. The certificate-expiry and JWKS
// alerts fire; plaintext clients of the TLS port fire the TLS-failure
// alert; a burst of franz-go clients with wrong SCRAM and PLAIN passwords
// fires the SASL-failure alert; and once kproxy is stopped, KproxyNotReady
// fires.
func TestAlertsFire(t *testing.T) {
	needTool(t, "prometheus")
	dashboard, rules := dashboardExpressions(t), alertRules(t)
	ctx := testkit.Context(t, 150*time.Second)

	pki := certs.New(t)
	expiring := testpki.ServerLeaf()
	expiring.NotAfter = time.Now().Add(36 * time.Hour)
	if _, _, err := pki.CA.WriteLeaf(pki.Dir, "server", expiring); err != nil {
		t.Fatal(err)
	}
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "provider down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(jwks.Close)
	credential, err := auth.HashPassword(auth.ScramSHA512, "alice-secret", auth.MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "t"))
	kp := kproxytest.Start(t, testkit.Config{
		Upstream: []string{cluster.ListenAddrs()[0]},
		Admin:    true,
		Log:      "{level: info, format: json}",
		Extra:    "policy: {quota_windows: {samples: 11, size: 100ms}, quotas: [{name: slow, principals: [\"User:alice\"], produce_bytes_per_second: 20000}]}\n",
		ListenerKeys: fmt.Sprintf(`tls: {cert_file: %q, key_file: %q}, sasl: {mode: terminate, mechanisms: [SCRAM-SHA-512, PLAIN, OAUTHBEARER], `+
			`users: [{name: alice, credentials: [%q]}], oauthbearer: {jwks_url: %q, issuer: "https://idp.test"}}`,
			pki.ServerCert, pki.ServerKey, credential, jwks.URL),
	}.YAML(), kproxytest.WithLog(io.Discard, zerolog.InfoLevel))
	prom := startPrometheus(t, kp.AdminAddr(), shortenedRules(t))

	certAlert := waitFiring(ctx, t, prom, "KproxyCertificateExpiringCritical", func() {})
	if certAlert["certificate"] != "listeners.tls" || certAlert["serial"] == "" || certAlert["job"] != "kproxy" {
		t.Errorf("KproxyCertificateExpiringCritical fired with labels %v, want certificate listeners.tls, a serial and job kproxy", certAlert)
	}
	for _, alert := range []string{"KproxyCertificateExpiring", "KproxyJWKSFetchFailing", "KproxyJWKSNoKeys"} {
		waitFiring(ctx, t, prom, alert, func() {})
	}
	waitFiring(ctx, t, prom, "KproxyTLSHandshakeFailures", func() { speakPlaintext(kp.BootstrapAddr(), 10) })
	checkNotFiring(ctx, t, prom, "KproxySASLAuthenticationFailures", "before any SASL login")
	waitFiring(ctx, t, prom, "KproxySASLAuthenticationFailures", func() { badPasswords(ctx, t, kp.BootstrapAddr(), pki, 5) })
	produceThrottled(ctx, t, kp.BootstrapAddr(), pki, scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism())
	// The quota's series exist from start, at 0: the throttle must show.
	waitTrue(ctx, t, prom, alertRule{Alert: "(quota throttle seen)", Expr: `kproxy_quota_throttle_seconds_total{job="kproxy", quota="slow", kind="produce"} > 0`}, func() {})
	checkEverySeries(ctx, t, prom, securityPanels(dashboard, true), rules, securityRules(true))

	checkNotFiring(ctx, t, prom, "KproxyNotReady", "while kproxy serves")
	if err := kp.Stop(); err != nil {
		t.Fatalf("stop kproxy: %v", err)
	}
	waitFiring(ctx, t, prom, "KproxyNotReady", func() {})
}

// forDuration is a rule's for: clause.
var forDuration = regexp.MustCompile(`(?m)^(\s+for:\s*)\S+\s*$`)

// shortenedRules writes a copy of the committed rules file whose for:
// durations are 2 s, so that a test sees alerts fire within seconds; the
// expressions, labels and annotations are the committed ones.
func shortenedRules(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if !forDuration.Match(b) {
		t.Fatalf("%s has no for: clause to shorten", rulesFile)
	}
	path := filepath.Join(t.TempDir(), "alerts.yaml")
	if err := os.WriteFile(path, forDuration.ReplaceAll(b, []byte("${1}2s")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// speakPlaintext opens n connections to kproxy's TLS port and sends each
// a Kafka request in plaintext, a handshake kproxy fails.
func speakPlaintext(addr string, n int) {
	for range n {
		knock(addr)
	}
}

// trustKproxy is the client option for kproxy's TLS listener, whose
// certificate the test PKI's CA issued.
func trustKproxy(pki certs.Files) kgo.Opt {
	return kgo.DialTLSConfig(&tls.Config{RootCAs: pki.Pool(), MinVersion: tls.VersionTLS12})
}

// produceThrottled produces 64 KiB, uncompressed, as mechanism's user at
// once: more than the quota's 20000 bytes per second over its window of
// about 1 s, so requests are throttled, for about 3 s in all.
func produceThrottled(ctx context.Context, t *testing.T, bootstrap string, pki certs.Files, mechanism sasl.Mechanism) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.SASL(mechanism), kgo.DefaultProduceTopic("t"),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		trustKproxy(pki))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range 32 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: make([]byte, 2048)}).FirstErr(); err != nil {
			t.Fatalf("produce record %d through kproxy: %v", i, err)
		}
	}
}

// badPasswords makes n franz-go clients log in with a wrong SCRAM-SHA-512
// password and n with a wrong PLAIN one; each login fails.
func badPasswords(ctx context.Context, t *testing.T, bootstrap string, pki certs.Files, n int) {
	t.Helper()
	mechanisms := []sasl.Mechanism{
		scram.Auth{User: "alice", Pass: "wrong"}.AsSha512Mechanism(),
		plain.Auth{User: "alice", Pass: "wrong"}.AsMechanism(),
	}
	for _, m := range mechanisms {
		for range n {
			cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.SASL(m), kgo.RequestRetries(0),
				trustKproxy(pki))
			if err != nil {
				t.Fatal(err)
			}
			pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if err := cl.Ping(pingCtx); err == nil {
				t.Errorf("%s login with a wrong password succeeded", m.Name())
			}
			cancel()
			cl.Close()
		}
	}
}

// firingAlert is one alert of Prometheus' /api/v1/alerts.
type firingAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

// activeAlerts returns the alerts Prometheus holds pending or firing.
func activeAlerts(ctx context.Context, t *testing.T, prom *promServer) []firingAlert {
	t.Helper()
	var data struct {
		Alerts []firingAlert `json:"alerts"`
	}
	if err := prom.get(ctx, "/api/v1/alerts", nil, &data); err != nil {
		t.Fatalf("alerts: %v", err)
	}
	return data.Alerts
}

// checkNotFiring fails the test if alert is firing now, when what the
// test has done so far should not make it fire.
func checkNotFiring(ctx context.Context, t *testing.T, prom *promServer, alert, when string) {
	t.Helper()
	for _, a := range activeAlerts(ctx, t, prom) {
		if a.Labels["alertname"] == alert && a.State == "firing" {
			t.Errorf("alert %s fires %s: %v", alert, when, a.Labels)
		}
	}
}

// waitFiring polls Prometheus' alerts until alert is firing, calling
// nudge before each poll, and returns the labels of the firing alert. The
// deadline is generous: the rules' for: durations are 2 s and Prometheus
// scrapes and evaluates every second.
func waitFiring(ctx context.Context, t *testing.T, prom *promServer, alert string, nudge func()) map[string]string {
	t.Helper()
	const within = 60 * time.Second
	var seen []string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		nudge()
		seen = seen[:0]
		for _, a := range activeAlerts(ctx, t, prom) {
			if a.Labels["alertname"] == alert && a.State == "firing" {
				return a.Labels
			}
			seen = append(seen, a.Labels["alertname"]+" "+a.State)
		}
	}
	t.Errorf("alert %s did not fire within %s; alerts active: %v", alert, within, seen)
	return nil
}
