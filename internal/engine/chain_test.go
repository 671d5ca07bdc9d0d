package engine_test

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/quota"
	"github.com/kproxy/kproxy/internal/tenant"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/policy"
)

// metadataNames is a program's filter noting the topic names it sees in
// Metadata requests and responses.
type metadataNames struct {
	mu        sync.Mutex
	requests  []string
	responses []string
}

func (m *metadataNames) Register(r *filter.Registry) {
	filter.OnRequest(r, m.request)
	filter.OnResponse(r, m.response)
}

func (m *metadataNames) request(_ *filter.Conn, req *kmsg.MetadataRequest) filter.Verdict {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range req.Topics {
		if t.Topic != nil {
			m.requests = append(m.requests, *t.Topic)
		}
	}
	return filter.Verdict{}
}

func (m *metadataNames) response(resp *kmsg.MetadataResponse) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range resp.Topics {
		if t.Topic != nil {
			m.responses = append(m.responses, fmt.Sprintf("%s=%d", *t.Topic, t.ErrorCode))
		}
	}
	return nil
}

func (m *metadataNames) seen() (requests, responses string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.requests, " "), strings.Join(m.responses, " ")
}

// describeOnly lets everyone describe the topic "allowed" and nothing
// else.
const describeOnly = `
policy:
  default: deny
  rules:
    - {name: describe-allowed, principals: ["*"], allow: [describe], topics: ["allowed"]}
`

func newEnforcer(t *testing.T, yaml string) *policy.Enforcer {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader("upstream: {bootstrap_servers: [\"127.0.0.1:1\"]}\n" + yaml))
	if err != nil {
		t.Fatal(err)
	}
	enf, err := policy.New(cfg.Policy, cfg.Audit, policy.WithAuditWriter(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { enf.Close() })
	return enf
}

// noAudit discards quota throttle audits.
type noAudit struct{}

func (noAudit) AuditThrottle(quota.Throttle) {}

func newQuotas(t *testing.T) *quota.Engine {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(`
upstream: {bootstrap_servers: ["127.0.0.1:1"]}
policy:
  default: allow
  quotas:
    - {name: produce, principals: ["*"], produce_bytes_per_second: 1000000}
`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := quota.New(cfg.Policy, policy.QuotaMatcher, prometheus.NewRegistry(), noAudit{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A configured server's chain lists each filter in its phase, from the
// client's side to the cluster's, whatever order the program added them
// in: the program's filter, added before the policy, runs after it.
func TestChainListsFiltersByPhase(t *testing.T) {
	cred, err := auth.HashPassword(auth.ScramSHA256, "alice-secret", auth.MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	px := testkit.StartEngine(t, testkit.Engine{YAML: fmt.Sprintf(`
upstream: {bootstrap_servers: [%q], dial_timeout: 5s}
listeners:
  bind_host: 127.0.0.1
  bootstrap_port: 0
  broker_port_base: 0
  sasl: {mode: terminate, mechanisms: [PLAIN], users: [{name: alice, credentials: [%q]}]}
log: {level: warn}
`, testkit.Cluster(t, 1).ListenAddrs()[0], cred), Options: []engine.Option{engine.WithFilters(&metadataNames{}, newEnforcer(t, describeOnly)),
		engine.WithFilters(newQuotas(t), tenant.New(tenant.Names{Topic: "team-a."}))}})
	var got []string
	for _, link := range px.Chain() {
		got = append(got, link.String())
	}
	want := []string{
		"addresses: rewrite.Addresses",
		"negotiate: rewrite.APIVersionsClamp",
		"negotiate: engine.saslVersions",
		"authorize: engine.sessionGuard",
		"authorize: policy.Enforcer",
		"program: engine_test.metadataNames",
		"names: tenant.Mapper",
		"quota: quota.Engine",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("chain:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A program's filter sees a request after the policy decided it and
// before the name boundary: only the topics the principal may describe,
// in the tenant's names; and it sees the response as the policy answered
// it (the removed topic refused, though the cluster has it), in the
// tenant's names.
func TestProgramFilterSeesThePolicysRequestInTheTenantsNames(t *testing.T) {
	c := testkit.Cluster(t, 1, kfake.SeedTopics(1, "team-a.allowed", "team-a.secret"))
	seen := &metadataNames{}
	px := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: c.ListenAddrs()}.YAML(), Options: []engine.Option{
		engine.WithFilters(seen, newEnforcer(t, describeOnly)),
		engine.WithFilters(tenant.New(tenant.Names{Topic: "team-a."}))}})
	raw := testkit.DialRaw(t, px.BootstrapAddr(), "chain-order")
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	for _, name := range []string{"allowed", "secret"} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
	}
	resp := raw.MustRoundTrip(t, req).(*kmsg.MetadataResponse)
	codes := map[string]int16{}
	for _, t := range resp.Topics {
		codes[*t.Topic] = t.ErrorCode
	}
	if codes["allowed"] != 0 || codes["secret"] != 29 || len(codes) != 2 {
		t.Fatalf("client got %v, want allowed=0 secret=29 (TOPIC_AUTHORIZATION_FAILED)", codes)
	}
	requests, responses := seen.seen()
	if requests != "allowed" {
		t.Errorf("program filter saw request topics %q, want only %q: the policy removed the other, the boundary had not prefixed it yet", requests, "allowed")
	}
	if responses != "allowed=0 secret=29" {
		t.Errorf("program filter saw response topics %q, want %q: the tenant's names, as the policy answered them", responses, "allowed=0 secret=29")
	}
}
