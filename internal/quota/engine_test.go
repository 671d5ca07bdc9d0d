package quota_test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/quota"
	"github.com/kproxy/kproxy/policy"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

var now = time.Unix(1_700_000_000, 0)

// engine builds an engine from a policy section's YAML.
func engine(t *testing.T, yaml string) *quota.Engine {
	t.Helper()
	e, err := quota.New(parsePolicy(t, yaml), policy.QuotaMatcher, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func parsePolicy(t *testing.T, yaml string) *policyconfig.Policy {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader("upstream: {bootstrap_servers: [\"127.0.0.1:1\"]}\n" + yaml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Policy
}

// bind returns a connection of user with clientID bound to e's rules.
func bind(t *testing.T, e *quota.Engine, user, clientID string) (*quota.Conn, quota.Admission) {
	t.Helper()
	c := &quota.Conn{}
	if !e.Stale(c, user, clientID) {
		t.Fatal("a new connection is not stale")
	}
	adm := e.Refresh(c, user, &quota.Principal{User: user, ClientID: clientID}, now)
	if e.Stale(c, user, clientID) {
		t.Fatal("a connection just bound is stale")
	}
	return c, adm
}

// With 11 windows of 1 s, a new rate is measured over 10 s: a quota of
// q B/s lets 10 q bytes through before the first throttle.

func TestFirstMatchingRulePerKind(t *testing.T) {
	e := engine(t, `
policy:
  quotas:
    - {name: alice, principals: ["User:alice"], produce_bytes_per_second: 100}
    - {name: everyone, principals: ["*"], produce_bytes_per_second: 200, fetch_bytes_per_second: 300}
`)
	alice, _ := bind(t, e, "alice", "app")
	if th := alice.Binding().Record(quota.Produce, 1500, now); th == 0 {
		t.Error("alice's produce is under her own rule (100 B/s): 1500 B over 10 s must be throttled")
	}
	if th := alice.Binding().Record(quota.Fetch, 2900, now); th != 0 {
		t.Errorf("alice's fetch falls to the next rule setting it (300 B/s): throttled %v", th)
	}
	bob, _ := bind(t, e, "bob", "app")
	if th := bob.Binding().Record(quota.Produce, 1500, now); th != 0 {
		t.Errorf("bob's produce is under everyone (200 B/s): throttled %v", th)
	}
	if alice.Binding().Limits(quota.Request) {
		t.Error("no rule sets request_percentage, yet it limits alice")
	}
	carol, _ := bind(t, engine(t, "policy:\n  quotas: [{name: a, principals: [\"User:alice\"], max_connections: 1}]\n"), "carol", "x")
	if carol.Binding() != nil {
		t.Error("a connection no rule matches has a binding")
	}
}

func TestQuotaSharedByAUsersConnections(t *testing.T) {
	e := engine(t, "policy:\n  quotas: [{name: q, principals: [\"User:*\"], produce_bytes_per_second: 100}]\n")
	one, _ := bind(t, e, "alice", "app-1")
	two, _ := bind(t, e, "alice", "app-2")
	other, _ := bind(t, e, "bob", "app-1")
	if th := one.Binding().Record(quota.Produce, 900, now); th != 0 {
		t.Fatalf("throttled within the allowance: %v", th)
	}
	if th := two.Binding().Record(quota.Produce, 200, now); th == 0 {
		t.Error("alice's second connection (another client id) did not share her quota")
	}
	if th := other.Binding().Record(quota.Produce, 900, now); th != 0 {
		t.Errorf("bob shares alice's quota: throttled %v", th)
	}
	// Closing and reconnecting does not reset the rate.
	e.Release(one)
	e.Release(two)
	again, _ := bind(t, e, "alice", "app-1")
	if th := again.Binding().Record(quota.Produce, 10, now); th == 0 {
		t.Error("a reconnecting client started with a fresh rate")
	}
}

func TestClientIDRulesSplitByClientID(t *testing.T) {
	e := engine(t, "policy:\n  quotas: [{name: q, principals: [\"client_id:app-*\"], produce_bytes_per_second: 100}]\n")
	one, _ := bind(t, e, "alice", "app-1")
	two, _ := bind(t, e, "alice", "app-2")
	one.Binding().Record(quota.Produce, 900, now)
	if th := two.Binding().Record(quota.Produce, 900, now); th != 0 {
		t.Errorf("a rule naming client ids is per (user, client id), as Kafka's <user, client-id> quotas: throttled %v", th)
	}
}

func TestReplicasSplitTheQuota(t *testing.T) {
	e := engine(t, "policy:\n  quota_replicas: 2\n  quotas: [{name: q, principals: [\"*\"], produce_bytes_per_second: 100, max_connections: 3}]\n")
	c, _ := bind(t, e, "alice", "app")
	if th := c.Binding().Record(quota.Produce, 600, now); th == 0 {
		t.Error("with 2 replicas each enforces 50 B/s: 600 B over 10 s must be throttled")
	}
	// max_connections 3 over 2 replicas: 1 each (rounded down, at least 1),
	// which c holds.
	if _, adm := bind(t, e, "alice", "app"); !adm.Refuse {
		t.Fatal("a second connection was let in: max_connections 3 over 2 replicas is 1 each")
	}
}

func TestReloadKeepsRatesAndRebinds(t *testing.T) {
	e := engine(t, "policy:\n  quotas: [{name: q, principals: [\"*\"], produce_bytes_per_second: 100}]\n")
	c, _ := bind(t, e, "alice", "app")
	c.Binding().Record(quota.Produce, 900, now)
	if err := e.Reload(parsePolicy(t, "policy:\n  quotas: [{name: q, principals: [\"*\"], produce_bytes_per_second: 100}, {name: r, principals: [\"*\"], fetch_bytes_per_second: 5}]\n")); err != nil {
		t.Fatal(err)
	}
	if !e.Stale(c, "alice", "app") {
		t.Fatal("a connection is not stale after a reload")
	}
	e.Refresh(c, "alice", &quota.Principal{User: "alice", ClientID: "app"}, now)
	if th := c.Binding().Record(quota.Produce, 200, now); th == 0 {
		t.Error("a reload that keeps a rule reset its measured rate")
	}
	if !c.Binding().Limits(quota.Fetch) {
		t.Error("a rule added by the reload does not apply to the open connection")
	}
	if err := e.Reload(nil); err != nil {
		t.Fatal(err)
	}
	e.Refresh(c, "alice", &quota.Principal{User: "alice", ClientID: "app"}, now)
	if c.Binding() != nil {
		t.Error("quotas removed by a reload still bind the connection")
	}
}

func TestMaxConnectionsFollowsThePrincipal(t *testing.T) {
	e := engine(t, "policy:\n  quotas: [{name: q, principals: [\"User:alice\"], max_connections: 1}]\n")
	anon, _ := bind(t, e, "", "app") // before authentication: not alice
	if anon.Binding() != nil {
		t.Fatal("an unauthenticated connection is bound to alice's rule")
	}
	if adm := e.Refresh(anon, "alice", &quota.Principal{User: "alice", ClientID: "app"}, now); adm.Refuse {
		t.Fatal("alice's first connection refused")
	}
	second := &quota.Conn{}
	adm := e.Refresh(second, "alice", &quota.Principal{User: "alice", ClientID: "app"}, now)
	if !adm.Refuse || adm.Reason != "max_connections" || adm.Delay != 0 {
		t.Fatalf("alice's second connection: %+v, want refused at once for max_connections", adm)
	}
	// A reload does not refuse a connection already open...
	if err := e.Reload(parsePolicy(t, "policy:\n  quotas: [{name: q, principals: [\"User:alice\"], max_connections: 1}]\n")); err != nil {
		t.Fatal(err)
	}
	if adm := e.Refresh(anon, "alice", &quota.Principal{User: "alice", ClientID: "app"}, now); adm.Refuse {
		t.Fatal("a reload refused a connection already counted")
	}
	// ... and its slot is free once it closes.
	e.Release(anon)
	if adm := e.Refresh(&quota.Conn{}, "alice", &quota.Principal{User: "alice", ClientID: "app"}, now); adm.Refuse {
		t.Fatal("alice's connection refused after her only other one closed")
	}
}

func TestConnectionCreationRateRefusesAndUncounts(t *testing.T) {
	e := engine(t, "policy:\n  quotas: [{name: q, principals: [\"*\"], connection_creation_rate: 1}]\n")
	for i := 0; i < 10; i++ { // 1/s over the 10 s a new rate is measured over
		if _, adm := bind(t, e, "alice", "app"); adm.Refuse {
			t.Fatalf("connection %d refused within the allowance", i+1)
		}
	}
	_, adm := bind(t, e, "alice", "app")
	if !adm.Refuse || adm.Reason != "connection_creation_rate" || adm.Delay <= 0 || adm.Delay > time.Second {
		t.Fatalf("11th connection: %+v, want refused after a delay of at most one window", adm)
	}
	// Refused connections are not counted (as Kafka unrecords them): after
	// many refused at 5 s, once the first window is purged (11 s) the rate
	// is back to nothing and a connection is let in.
	at := func(d time.Duration) quota.Admission {
		return e.Refresh(&quota.Conn{}, "alice", &quota.Principal{User: "alice", ClientID: "app"}, now.Add(d))
	}
	for i := 0; i < 100; i++ {
		if adm := at(5 * time.Second); !adm.Refuse {
			t.Fatalf("connection at 5 s let in over the rate: %+v", adm)
		}
	}
	if adm := at(11500 * time.Millisecond); adm.Refuse {
		t.Errorf("refused connections were counted: a connection at 11.5 s refused: %+v", adm)
	}
}

// TestUnauthenticatedConnectionLimitsArePerAddress: before they
// authenticate all clients are ANONYMOUS; a "*" rule's connection limits
// then count per address, as Kafka's connection quotas count per IP, so
// one address opening connections cannot use up everyone's.
func TestUnauthenticatedConnectionLimitsArePerAddress(t *testing.T) {
	e := engine(t, "policy:\n  quotas: [{name: q, principals: [\"*\"], connection_creation_rate: 1, max_connections: 5}]\n")
	from := func(addr string) quota.Admission {
		p := &quota.Principal{User: quota.Anonymous, ClientID: "x", Addr: netip.MustParseAddr(addr)}
		return e.Refresh(&quota.Conn{}, "", p, now)
	}
	refused := 0
	for i := 0; i < 20; i++ {
		if from("10.0.0.1").Refuse {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("20 connections at once from one address were all let in")
	}
	if adm := from("10.0.0.2"); adm.Refuse {
		t.Errorf("another address's first connection was refused (%+v): one address used up everyone's connection limits", adm)
	}
}

// throttles records what the engine hands its auditor.
type throttles struct{ got []quota.Throttle }

func (a *throttles) AuditThrottle(t quota.Throttle) { a.got = append(a.got, t) }

// TestAuditLinesAreSampled: a throttled request goes to the auditor at
// quota_audit_sample_rate (all at 1, none at 0), naming the rule, the
// kind, the throttle time and who was throttled.
func TestAuditLinesAreSampled(t *testing.T) {
	for _, c := range []struct {
		rate  string
		lines int
	}{{"1", 5}, {"0", 0}} {
		audit := &throttles{}
		p := parsePolicy(t, "policy:\n  quota_audit_sample_rate: "+c.rate+"\n  quotas: [{name: q, principals: [\"*\"], produce_bytes_per_second: 1}]\n")
		e, err := quota.New(p, policy.QuotaMatcher, nil, audit)
		if err != nil {
			t.Fatal(err)
		}
		var conn quota.Conn
		who := &quota.Principal{User: "alice", ClientID: "app", Listener: "bootstrap", VirtualCluster: "team-a",
			Addr: netip.MustParseAddr("10.1.2.3"), Claims: map[string][]string{"sub": {"alice"}}}
		if adm := e.Refresh(&conn, "alice", who, now); adm.Refuse {
			t.Fatalf("refused: %+v", adm)
		}
		var throttled []time.Duration
		for i := 0; i < 5; i++ {
			throttled = append(throttled, conn.Binding().Record(quota.Produce, 100, now))
		}
		if len(audit.got) != c.lines {
			t.Fatalf("sample rate %s: %d audit lines of 5 throttles, want %d", c.rate, len(audit.got), c.lines)
		}
		for i, got := range audit.got {
			want := quota.Throttle{Time: now, Quota: "q", Kind: quota.Produce, Principal: "User:alice", ClientID: "app",
				Listener: "bootstrap", VirtualCluster: "team-a", Client: netip.MustParseAddr("10.1.2.3"),
				Throttle: throttled[i], SampleRate: 1}
			if got != want || got.Throttle <= 0 {
				t.Errorf("audit line %d: %+v, want %+v", i, got, want)
			}
		}
	}
}

// TestRateRefusalUncountsTheConnection: a connection the connection rate
// refuses after max_connections counted it no longer counts, so refusals
// do not fill max_connections.
func TestRateRefusalUncountsTheConnection(t *testing.T) {
	e := engine(t, "policy:\n  quotas: [{name: q, principals: [\"*\"], connection_creation_rate: 1, max_connections: 11}]\n")
	at := func(d time.Duration) quota.Admission {
		return e.Refresh(&quota.Conn{}, "alice", &quota.Principal{User: "alice", ClientID: "app"}, now.Add(d))
	}
	for i := 0; i < 10; i++ { // the rate's allowance; each stays open
		if adm := at(0); adm.Refuse {
			t.Fatalf("connection %d refused: %+v", i+1, adm)
		}
	}
	for i := 0; i < 20; i++ {
		if adm := at(5 * time.Second); adm.Reason != "connection_creation_rate" {
			t.Fatalf("connection at 5 s: %+v, want refused by the rate", adm)
		}
	}
	if adm := at(11500 * time.Millisecond); adm.Refuse {
		t.Errorf("the 11th open connection refused (%+v): refused connections still count against max_connections", adm)
	}
}
