package e2esecurity

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"gopkg.in/yaml.v3"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
	"github.com/kproxy/kproxy/internal/tlsconfig"
)

// evidence is everything kproxy said during a test, from every channel an
// operator or a client could see: logs, errors, HTTP answers, dumps.
type evidence struct {
	mu    sync.Mutex
	items map[string]*strings.Builder
}

func (e *evidence) add(channel, text string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.items == nil {
		e.items = map[string]*strings.Builder{}
	}
	b := e.items[channel]
	if b == nil {
		b = &strings.Builder{}
		e.items[channel] = b
	}
	b.WriteString(text)
	b.WriteByte('\n')
}

func (e *evidence) addErr(channel string, err error) {
	if err != nil {
		e.add(channel, err.Error())
	}
}

// leaks lists, per channel, the secrets found in it.
func (e *evidence) leaks(secrets []string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for ch, b := range e.items {
		for _, s := range secrets {
			if strings.Contains(b.String(), s) {
				out = append(out, fmt.Sprintf("%s contains %q", ch, s))
			}
		}
	}
	return out
}

func (e *evidence) size() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, b := range e.items {
		n += b.Len()
	}
	return n
}

// upstreamWithPassword is a one-broker kfake over TLS that lets
// kproxy-svc in with SCRAM-SHA-256 and password.
func upstreamWithPassword(t *testing.T, p certs.Files, password string) *kfake.Cluster {
	t.Helper()
	serverTLS, _, err := tlsconfig.ServerConfig(p.ServerCert, p.ServerKey, "none", "")
	if err != nil {
		t.Fatal(err)
	}
	return testkit.Cluster(t, 1, kfake.TLS(serverTLS), kfake.EnableSASL(), kfake.SeedTopics(1, "secrets"),
		kfake.Superuser("SCRAM-SHA-256", "kproxy-svc", password))
}

// secretsYAML is a kproxy terminating SCRAM-SHA-512 and PLAIN for alice,
// logging in upstream with upstreamSASL (the flow-style mapping's keys).
func secretsYAML(p certs.Files, bootstrap, aliceCred, upstreamSASL string) string {
	return fmt.Sprintf(`
upstream:
  bootstrap_servers: [%q]
  dial_timeout: 5s
  tls: {ca_file: %s}
  sasl: {mechanism: SCRAM-SHA-256, username: kproxy-svc, %s}
listeners:
  bind_host: 127.0.0.1
  tls: {cert_file: %s, key_file: %s}
  sasl:
    mechanisms: [SCRAM-SHA-512, PLAIN]
    users: [{name: alice, credentials: [%q]}]
admin: {listen: "127.0.0.1:0"}
log: {level: trace}
`, bootstrap, p.CAFile, upstreamSASL, p.ServerCert, p.ServerKey, aliceCred)
}

// startLogged starts kproxy from yaml with every log line at trace level
// going to logs, without waiting for readiness; it returns the
// configuration as kproxy parses it, and the start's error.
func startLogged(t *testing.T, yamlText string, logs io.Writer) (*kproxytest.Kproxy, *config.Config, error) {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(yamlText))
	if err != nil {
		return nil, nil, err
	}
	kp, err := kproxytest.TryStart(t, yamlText, kproxytest.WithLog(logs, zerolog.TraceLevel), kproxytest.Unready())
	return kp, cfg, err
}

// scrape collects what the admin endpoint serves.
func scrape(t *testing.T, ev *evidence, kp *kproxytest.Kproxy) {
	t.Helper()
	for _, path := range []string{"/metrics", "/healthz", "/readyz", "/config", "/brokers"} {
		resp, err := http.Get("http://" + kp.AdminAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ev.add("admin "+path, string(body))
	}
}

// dumpConfig adds the redacted configuration, as JSON and YAML.
func dumpConfig(t *testing.T, ev *evidence, cfg *config.Config) {
	t.Helper()
	j, err := json.Marshal(cfg.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.Marshal(cfg.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	ev.add("config dump (JSON)", string(j))
	ev.add("config dump (YAML)", string(y))
}

// rawSASL sends SaslHandshake v1 and one SaslAuthenticate v2 with token on
// a new TLS connection and returns what the client is told.
func rawSASL(t *testing.T, addr string, p certs.Files, mechanism string, token []byte) (string, error) {
	t.Helper()
	c, err := dialRawTLS(t, addr, clientTLS(t, p, false))
	if err != nil {
		return "", err
	}
	defer c.Close()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = mechanism
	if _, err := c.RoundTrip(hs); err != nil {
		return "", err
	}
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SetVersion(2)
	req.SASLAuthBytes = token
	resp, err := c.RoundTrip(req)
	if err != nil {
		return "", err
	}
	r := resp.(*kmsg.SASLAuthenticateResponse)
	msg := fmt.Sprintf("error code %d", r.ErrorCode)
	if r.ErrorMessage != nil {
		msg += ": " + *r.ErrorMessage
	}
	return msg + " " + string(r.SASLAuthBytes), nil
}

// TestSecretsNeverLeak runs kproxy with the upstream password given
// literally, in a file and in the environment, plus one wrong upstream
// password; drives good and bad logins (SCRAM and PLAIN, known and unknown
// users, malformed tokens) and broken configurations; and collects every
// log line (trace level), every error returned to the test or told to a
// client, the admin endpoint's answers and the redacted configuration.
// No password, attempted password, password_env value or stored
// credential may appear in any of them.
func TestSecretsNeverLeak(t *testing.T) {
	p := certs.New(t)
	ev := &evidence{}
	logs := &logbuf.Buffer{}
	const alicePassword = "Alice-Real-Pw-9f3k"
	aliceCred, err := auth.HashPassword(auth.ScramSHA512, alicePassword, 4096)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{alicePassword, aliceCred}
	secret := func(s string) string { secrets = append(secrets, s); return s }

	// Positive control: the detector finds a secret where there is one.
	{
		cfg, err := config.Parse(strings.NewReader(secretsYAML(p, "127.0.0.1:1", aliceCred, "password: "+secret("Control-Pw-0"))))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(cfg)
		control := &evidence{}
		control.add("unredacted config", string(raw))
		if len(control.leaks(secrets)) != 2 {
			t.Fatalf("leak detector did not find the password and the credential in an unredacted dump: %v", control.leaks(secrets))
		}
		dumpConfig(t, ev, cfg)
	}

	pwFile := filepath.Join(t.TempDir(), "upstream-password")
	const envName = "KPROXY_E2E_UPSTREAM_PASSWORD"
	for _, run := range []struct {
		name, password, sasl string
	}{
		{"literal", secret("Literal-Upstream-Pw-1"), "password: Literal-Upstream-Pw-1"},
		{"password_file", secret("File-Upstream-Pw-2"), "password_file: " + pwFile},
		{"password_env", secret("Env-Upstream-Pw-3"), "password_env: " + envName},
	} {
		t.Run(run.name, func(t *testing.T) {
			os.WriteFile(pwFile, []byte(run.password+"\n"), 0o600)
			t.Setenv(envName, run.password)
			cluster := upstreamWithPassword(t, p, run.password)
			kp, cfg, err := startLogged(t, secretsYAML(p, cluster.ListenAddrs()[0], aliceCred, run.sasl), logs)
			if err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			if err := kp.WaitReady(wctx); err != nil {
				t.Fatalf("kproxy not ready: %v", err)
			}
			addr := kp.BootstrapAddr()
			ctx := testkit.Context(t, 30*time.Second)
			clientOpts := func(m kgo.Opt) []kgo.Opt {
				return []kgo.Opt{kgo.SeedBrokers(addr), kgo.DialTLSConfig(clientTLS(t, p, false)), m, kgo.RequestRetries(0),
					kgo.DefaultProduceTopic("secrets"), kgo.RecordRetries(1)}
			}

			// A good login: proves the upstream password was used.
			good := newClient(t, clientOpts(kgo.SASL(scram.Auth{User: "alice", Pass: alicePassword}.AsSha512Mechanism()))...)
			if err := good.ProduceSync(ctx, &kgo.Record{Value: []byte("ok")}).FirstErr(); err != nil {
				t.Fatalf("alice through kproxy: %v", err)
			}
			good.Close()

			// Bad logins, through franz-go.
			for _, m := range []kgo.Opt{
				kgo.SASL(scram.Auth{User: "alice", Pass: secret("Wrong-Scram-Guess-" + run.name)}.AsSha512Mechanism()),
				kgo.SASL(plain.Auth{User: "alice", Pass: secret("Wrong-Plain-Guess-" + run.name)}.AsMechanism()),
				kgo.SASL(plain.Auth{User: "mallory", Pass: secret("Mallory-Plain-Pw-" + run.name)}.AsMechanism()),
				kgo.SASL(scram.Auth{User: "mallory", Pass: secret("Mallory-Scram-Pw-" + run.name)}.AsSha512Mechanism()),
			} {
				cl := newClient(t, clientOpts(m)...)
				err := cl.Ping(ctx)
				if err == nil {
					t.Fatal("a wrong password got in")
				}
				ev.addErr("franz-go client error", err)
				cl.Close()
			}
			// Bad and malformed tokens on raw connections, keeping exactly
			// what kproxy tells the client.
			for _, tc := range []struct{ mechanism, token string }{
				{"PLAIN", "\x00alice\x00" + secret("Raw-Wrong-Plain-"+run.name)},
				{"PLAIN", "alice\x00" + secret("Malformed-Plain-"+run.name)},
				{"PLAIN", "\x00alice\x00" + secret("Nul-In-Plain-"+run.name) + "\x00extra"},
				{"SCRAM-SHA-512", "n,,n=alice,r=abc," + secret("Scram-Garbage-"+run.name)},
				{"SCRAM-SHA-512", "n,,n=" + secret("Scram-Bad-Escape=ZZ-"+run.name) + ",r=abc"},
			} {
				msg, err := rawSASL(t, addr, p, tc.mechanism, []byte(tc.token))
				ev.add("told to a raw client", msg)
				ev.addErr("raw client error", err)
			}
			// Give the closes time to be logged.
			waitFor(5*time.Second, func() bool { return closedTotal(t, kp.Registry, "sasl_failed") >= 9 })
			if n := closedTotal(t, kp.Registry, "sasl_failed"); n < 9 {
				t.Errorf("sasl_failed closes %v, want at least 9 (each bad login)", n)
			}
			scrape(t, ev, kp)
			dumpConfig(t, ev, cfg)
		})
	}

	t.Run("wrong upstream password", func(t *testing.T) {
		cluster := upstreamWithPassword(t, p, secret("Real-Upstream-Pw-5"))
		kp, cfg, err := startLogged(t, secretsYAML(p, cluster.ListenAddrs()[0], aliceCred, "password: "+secret("Wrong-Upstream-Pw-4")), logs)
		if err != nil {
			t.Fatal(err)
		}
		if !waitFor(10*time.Second, func() bool { return strings.Contains(logs.String(), "upstream metadata not available yet") }) {
			t.Fatal("kproxy did not log the failed upstream login")
		}
		cl := newClient(t, kgo.SeedBrokers(kp.BootstrapAddr()), kgo.DialTLSConfig(clientTLS(t, p, false)),
			kgo.SASL(scram.Auth{User: "alice", Pass: alicePassword}.AsSha512Mechanism()), kgo.RequestRetries(0))
		err = cl.Ping(testkit.Context(t, 10*time.Second))
		if err == nil {
			t.Fatal("a client got through a kproxy whose upstream login fails")
		}
		ev.addErr("franz-go client error", err)
		waitFor(5*time.Second, func() bool { return closedTotal(t, kp.Registry, "upstream_unreachable") >= 1 })
		scrape(t, ev, kp)
		dumpConfig(t, ev, cfg)
	})

	t.Run("configuration errors", func(t *testing.T) {
		base := func(sasl string) string { return secretsYAML(p, "127.0.0.1:1", aliceCred, sasl) }
		for _, y := range []string{
			base("password: " + secret("Both-Set-Pw-6") + ", password_env: " + envName),
			base("password: " + secret("Both-File-Pw-7") + ", password_file: " + pwFile),
			strings.Replace(base("password: "+secret("Bad-Mech-Pw-8")), "SCRAM-SHA-256", "SCRAM-SHA-1", 1),
			strings.Replace(base("password: "+secret("No-User-Pw-9")), "username: kproxy-svc", `username: ""`, 1),
			base("pasword: " + secret("Typo-Key-Pw-10")),
			base("password: [" + secret("Seq-Pw-11") + "]"),
			base("password: {" + secret("Map-Pw-12") + ": x}"),
			// A password pasted where a hashed credential belongs.
			strings.Replace(base("password: x"), aliceCred, alicePassword, 1),
			strings.Replace(base("password: x"), aliceCred, "SCRAM-SHA-512:"+secret("Half-Cred-Pw-13"), 1),
			// A password where a mapping or a number belongs: yaml.v3
			// quotes such values (whole up to 10 bytes, else 7) in its
			// error.
			strings.Replace(base("password: x"), "sasl: {mechanism: SCRAM-SHA-256, username: kproxy-svc, password: x}", "sasl: "+secret("Pw-Short1"), 1),
			strings.Replace(base("password: x"), "sasl: {mechanism: SCRAM-SHA-256, username: kproxy-svc, password: x}", "sasl: |\n    "+secret("Pw-Block2")+"\n    more", 1),
			strings.Replace(base("password: x"), "users: [{name: alice, credentials: ", "users: [{name: alice, credentials: [], x: ", 1),
			strings.Replace(base("password: x"), "users: [{name: alice", "users: ["+secret("Pw-Short3")+", {name: alice", 1),
			strings.Replace(base("password: x"), "sasl:\n    mechanisms:", "sasl: "+secret("Zq7Lp9")+"-and-the-rest\n  x:\n    mechanisms:", 1),
			// A limit broken next to the secrets: the whole file is reported.
			base("password: "+secret("Next-To-Limit-Pw-14")) + "limits: {max_connections: -1}\n",
		} {
			_, err := config.Parse(strings.NewReader(y))
			if err == nil {
				t.Errorf("configuration accepted:\n%s", y)
				continue
			}
			ev.addErr("config.Parse error", err)
		}
		// Errors that only starting reveals: the file or variable named.
		os.Setenv(envName, "")
		defer os.Unsetenv(envName)
		empty := testkit.WriteFile(t, "empty", "\n")
		for _, sasl := range []string{
			"password_file: " + filepath.Join(t.TempDir(), "missing"),
			"password_file: " + empty,
			"password_env: " + envName,
			"password_env: KPROXY_E2E_NOT_SET",
		} {
			_, _, err := startLogged(t, base(sasl), logs)
			if err == nil {
				t.Errorf("kproxy started with %s", sasl)
				continue
			}
			ev.addErr("Start error", err)
		}
	})

	ev.add("kproxy log", logs.String())
	for _, leak := range ev.leaks(secrets) {
		t.Error(leak)
	}
	// The evidence is substantial: the test saw what it claims to check.
	for _, want := range []string{`"reason":"sasl_failed"`, `"reason":"upstream_unreachable"`, "upstream metadata not available yet"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log has no %s: the scenarios did not run as intended", want)
		}
	}
	if ev.size() < 10000 {
		t.Errorf("only %d bytes of evidence collected", ev.size())
	}
	if t.Failed() {
		t.Logf("kproxy log:\n%s", logs.String())
		for ch, b := range ev.items {
			if ch != "kproxy log" {
				t.Logf("%s:\n%s", ch, b.String())
			}
		}
	}
}
