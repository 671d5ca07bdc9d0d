package sasl_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	franzsasl "github.com/twmb/franz-go/pkg/sasl"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/proxy"
	"github.com/kproxy/kproxy/sasl"
)

// tokenMechanism is a made-up mechanism: the client's one message is a
// shared token, and each token names a service.
const tokenMechanism = "X-KPROXY-TOKEN"

// tokenSession is its server side.
type tokenSession struct {
	services map[string]string // token: service
	user     string
}

func (s *tokenSession) Step(msg []byte) ([]byte, bool, error) {
	service, ok := s.services[string(msg)]
	if !ok {
		return nil, false, errors.New("unknown token")
	}
	s.user = service
	return nil, true, nil
}

func (s *tokenSession) User() string { return s.user }

func tokenServer(services map[string]string) sasl.Mechanism {
	return sasl.Mechanism{Name: tokenMechanism, NewSession: func() sasl.Session { return &tokenSession{services: services} }}
}

// tokenClient is its client side, for franz-go.
type tokenClient string

func (tokenClient) Name() string { return tokenMechanism }

func (c tokenClient) Authenticate(context.Context, string) (franzsasl.Session, []byte, error) {
	return tokenClientSession{}, []byte(c), nil
}

type tokenClientSession struct{}

func (tokenClientSession) Challenge([]byte) (bool, []byte, error) { return true, nil, nil }

// tokenConfig is testkit.LocalConfig in front of upstream with listeners
// terminating SASL with mechanisms, followed by the sections extra.
func tokenConfig(upstream, mechanisms, extra string) string {
	return testkit.Config{Upstream: []string{upstream}, ListenerKeys: fmt.Sprintf("sasl: {mechanisms: [%s]}", mechanisms),
		Admin: true, Log: "{level: info, format: json}", Extra: extra}.YAML()
}

// loginConfig is testkit.LocalConfig with the upstream.sasl section
// saslKeys, in flow style.
func loginConfig(upstream, saslKeys string) string {
	return testkit.Config{Upstream: []string{upstream}, UpstreamKeys: "sasl: {" + saslKeys + "}",
		Admin: true, Log: "{level: info, format: json}"}.YAML()
}

// ordersPolicy lets svc-orders describe and write orders, and nobody
// anything else.
const ordersPolicy = `
policy:
  default: deny
  rules:
    - {name: orders-service, principals: ["User:svc-orders"], allow: [describe, write], topics: ["orders"]}
`

// TestProgramMechanismLogsIn: a program adds X-KPROXY-TOKEN through
// proxy.Options; the file enables it like a built-in mechanism, a
// franz-go client logs in with it through kproxy, and the policy decides
// by the principal the mechanism authenticated. A wrong token is refused
// as wrong credentials are.
func TestProgramMechanismLogsIn(t *testing.T) {
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "orders", "payments"))
	file := tokenConfig(cluster.ListenAddrs()[0], tokenMechanism, ordersPolicy)
	path := testkit.WriteConfig(t, file)
	reload := make(chan os.Signal, 1)
	kp := testkit.ServeInProcess(t, func(ctx context.Context, log io.Writer) error {
		return proxy.Run(ctx, proxy.Options{
			ConfigPath: path,
			Mechanisms: []sasl.Mechanism{tokenServer(map[string]string{"s3cret-orders": "svc-orders"})},
			LogOutput:  log,
			Reload:     reload,
		})
	})
	kp.WaitReady()
	// A reload validates the file knowing the program's mechanism too.
	reload <- syscall.SIGHUP
	if l := kp.WaitLog("the reload's outcome", func(l testkit.LogLine) bool {
		m := l.Message()
		return strings.HasPrefix(m, "policy reloaded") || strings.HasPrefix(m, "configuration reload rejected") || strings.HasPrefix(m, "configuration section changed")
	}); !strings.HasPrefix(l.Message(), "policy reloaded") {
		t.Errorf("reload logged %v", l)
	}
	ctx := testkit.Context(t, 30*time.Second)
	client := func(token string) *kgo.Client {
		c, err := kgo.NewClient(kgo.SeedBrokers(kp.Bootstrap), kgo.SASL(tokenClient(token)),
			kgo.DisableIdempotentWrite(), kgo.RequestRetries(1), kgo.RecordRetries(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}

	orders := client("s3cret-orders")
	if err := orders.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("svc-orders producing to orders: %v", err)
	}
	if err := orders.ProduceSync(ctx, &kgo.Record{Topic: "payments", Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("svc-orders producing to payments: %v, want TOPIC_AUTHORIZATION_FAILED from the policy", err)
	}
	if err := client("guessed").ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("a wrong token: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	// The metrics name the program's mechanism as they name a built-in one.
	for _, result := range []string{"success", "failure"} {
		series := `kproxy_sasl_authentications_total{mechanism="X-KPROXY-TOKEN",result="` + result + `"}`
		if v, ok := testkit.ScrapeSeries(t, kp.Admin, series); !ok || v < 1 {
			t.Errorf("%s: %v (present %v), want at least 1", series, v, ok)
		}
	}
}

// TestProgramMechanismLogsKproxyIn: a program's mechanism with a Login
// is kproxy's own login to its upstream. Here the upstream is another
// kproxy terminating the mechanism in front of kfake: a client without
// SASL reaches the cluster through both as the service the first kproxy's
// token names, and the second's policy decides by that principal.
func TestProgramMechanismLogsKproxyIn(t *testing.T) {
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "orders", "payments"))
	terminating := tokenConfig(cluster.ListenAddrs()[0], tokenMechanism, ordersPolicy)
	inner := testkit.ServeInProcess(t, func(ctx context.Context, log io.Writer) error {
		return proxy.Run(ctx, proxy.Options{
			ConfigPath: testkit.WriteConfig(t, terminating),
			Mechanisms: []sasl.Mechanism{tokenServer(map[string]string{"s3cret-orders": "svc-orders"})},
			LogOutput:  log,
		})
	})
	inner.WaitReady()
	loggingIn := loginConfig(inner.Bootstrap, "mechanism: "+tokenMechanism)
	outer := testkit.ServeInProcess(t, func(ctx context.Context, log io.Writer) error {
		return proxy.Run(ctx, proxy.Options{
			ConfigPath: testkit.WriteConfig(t, loggingIn),
			Mechanisms: []sasl.Mechanism{{Name: tokenMechanism, Login: func() franzsasl.Mechanism { return tokenClient("s3cret-orders") }}},
			LogOutput:  log,
		})
	})
	outer.WaitReady()

	ctx := testkit.Context(t, 30*time.Second)
	c, err := kgo.NewClient(kgo.SeedBrokers(outer.Bootstrap), kgo.DisableIdempotentWrite(), kgo.RequestRetries(1), kgo.RecordRetries(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("producing to orders as svc-orders: %v", err)
	}
	if err := c.ProduceSync(ctx, &kgo.Record{Topic: "payments", Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("producing to payments as svc-orders: %v, want TOPIC_AUTHORIZATION_FAILED from the policy", err)
	}
}

// TestProgramMechanismValidation: listeners.sasl.mechanisms accepts a
// program's mechanism only when the program added it, and an unknown name
// is refused naming the key and every valid name.
func TestProgramMechanismValidation(t *testing.T) {
	withFile := func(mechanisms string) string {
		return testkit.WriteConfig(t, tokenConfig("127.0.0.1:9092", mechanisms, ""))
	}
	added := []sasl.Mechanism{tokenServer(nil)}
	for _, tc := range []struct {
		mechanisms string
		added      []sasl.Mechanism
		wantErr    string
	}{
		{mechanisms: tokenMechanism, added: added},
		{mechanisms: "SCRAM-SHA-512, " + tokenMechanism, added: added,
			wantErr: "listeners.sasl.users: required in terminate mode with PLAIN or SCRAM"},
		{mechanisms: tokenMechanism,
			wantErr: `listeners.sasl.mechanisms[0]: "X-KPROXY-TOKEN": must be PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER`},
		{mechanisms: tokenMechanism + ", X-OTHER", added: added,
			wantErr: `listeners.sasl.mechanisms[1]: "X-OTHER": must be PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or X-KPROXY-TOKEN`},
		// A mechanism without a server side is for upstream.sasl only.
		{mechanisms: tokenMechanism, added: []sasl.Mechanism{{Name: tokenMechanism, Login: func() franzsasl.Mechanism { return tokenClient("") }}},
			wantErr: `listeners.sasl.mechanisms[0]: "X-KPROXY-TOKEN": must be PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER`},
	} {
		_, err := proxy.Validate(proxy.Options{ConfigPath: withFile(tc.mechanisms), Mechanisms: tc.added, SkipFileChecks: true})
		if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("mechanisms [%s], %d added: %v, want %q", tc.mechanisms, len(tc.added), err, tc.wantErr)
		}
	}
}

// TestProgramMechanismNames: a program's mechanism may not take a
// built-in name or one outside RFC 4422's alphabet.
func TestProgramMechanismNames(t *testing.T) {
	path := testkit.WriteConfig(t, testkit.LocalConfig("127.0.0.1:9092"))
	for _, name := range []string{"PLAIN", "OAUTHBEARER", "x-lower", "", "X-MUCH-TOO-LONG-A-NAME"} {
		m := tokenServer(nil)
		m.Name = name
		if _, err := proxy.Validate(proxy.Options{ConfigPath: path, Mechanisms: []sasl.Mechanism{m}}); err == nil || !strings.Contains(err.Error(), "proxy.Options.Mechanisms") {
			t.Errorf("mechanism %q: %v, want it refused", name, err)
		}
	}
}

// TestProgramLoginValidation: upstream.sasl.mechanism may name a
// program's mechanism that has a Login, which needs no other key.
func TestProgramLoginValidation(t *testing.T) {
	path := testkit.WriteConfig(t, loginConfig("127.0.0.1:9092", "mechanism: "+tokenMechanism+", username: kproxy"))
	login := sasl.Mechanism{Name: tokenMechanism, Login: func() franzsasl.Mechanism { return tokenClient("t") }}
	for _, tc := range []struct {
		added   []sasl.Mechanism
		wantErr string
	}{
		{added: []sasl.Mechanism{login}, wantErr: "upstream.sasl.username: not used with mechanism X-KPROXY-TOKEN"},
		{added: []sasl.Mechanism{tokenServer(nil)}, wantErr: `upstream.sasl.mechanism: "X-KPROXY-TOKEN": must be PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER`},
	} {
		_, err := proxy.Validate(proxy.Options{ConfigPath: path, Mechanisms: tc.added, SkipFileChecks: true})
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("with Login %v: %v, want %q", tc.added[0].Login != nil, err, tc.wantErr)
		}
	}
}
