package config

import (
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

const twoTenants = `
upstream: {bootstrap_servers: ["127.0.0.1:9092"]}
listeners: {bind_host: 0.0.0.0, advertised_host: kafka.example.com}
policy: {default: allow}
virtual_clusters:
  - name: team-a
    listeners: {bootstrap_port: 19092, broker_port_base: 19100}
    topic_prefix: "team-a."
    group_prefix: "team-a."
    transactional_id_prefix: "team-a."
    cluster_id: team-a-cluster
  - name: team-b
    listeners: {bootstrap_port: 19192, broker_port_base: 19200, advertised_host: b.example.com}
    topic_prefix: "team-b."
    group_prefix: "team-b."
    transactional_id_prefix: "team-b."
    policy: {default: deny}
`

// TestVirtualClustersInherit: each virtual cluster is served with its own
// ports and prefixes; what it leaves out (bind and advertised host,
// upstream, policy) is the top level's, and what it sets wins.
func TestVirtualClustersInherit(t *testing.T) {
	cfg, err := Parse(strings.NewReader(twoTenants))
	if err != nil {
		t.Fatal(err)
	}
	cl := cfg.Clusters()
	if len(cl) != 2 || cl[0].Name != "team-a" || cl[1].Name != "team-b" {
		t.Fatalf("clusters %+v", cl)
	}
	a, b := cl[0], cl[1]
	if a.Config.Listeners.BootstrapPort != 19092 || a.Config.Listeners.BindHost != "0.0.0.0" || a.Config.Listeners.AdvertisedHost != "kafka.example.com" {
		t.Errorf("team-a listeners %+v: want its ports with the top level's hosts", a.Config.Listeners)
	}
	if b.Config.Listeners.AdvertisedHost != "b.example.com" {
		t.Errorf("team-b advertised_host %q: its own setting must win", b.Config.Listeners.AdvertisedHost)
	}
	if a.Config.Upstream.BootstrapServers[0] != "127.0.0.1:9092" || a.Config.Policy.Default != "allow" || b.Config.Policy.Default != "deny" {
		t.Errorf("upstream %v, policies %q/%q: want the top level's upstream, team-a the top policy, team-b its own",
			a.Config.Upstream.BootstrapServers, a.Config.Policy.Default, b.Config.Policy.Default)
	}
	if a.TopicPrefix != "team-a." || a.GroupPrefix != "team-a." || a.TransactionalIDPrefix != "team-a." || a.ClusterID != "team-a-cluster" || b.ClusterID != "" {
		t.Errorf("team-a names %+v, team-b cluster id %q", a, b.ClusterID)
	}
	if a.Config.VirtualClusters != nil {
		t.Error("a virtual cluster's engine configuration still lists virtual_clusters")
	}
	// Upstream inheritance is resolved late: an amended top level (the
	// embedded cluster's addresses) reaches the virtual clusters.
	cfg.Upstream.BootstrapServers = []string{"127.0.0.1:1"}
	if got := cfg.Clusters()[1].Config.Upstream.BootstrapServers[0]; got != "127.0.0.1:1" {
		t.Errorf("amended upstream not inherited: %s", got)
	}
}

// TestVirtualClustersInheritOAuthCAFiles: the CA files of the top level's
// listeners.sasl.oauthbearer and upstream.sasl reach a virtual cluster that
// leaves those sections out, and one that sets its own uses its own.
func TestVirtualClustersInheritOAuthCAFiles(t *testing.T) {
	top, own := certs.New(t).CAFile, certs.New(t).CAFile
	cfg, err := Parse(strings.NewReader(`
upstream:
  bootstrap_servers: ["127.0.0.1:9092"]
  sasl: {mechanism: OAUTHBEARER, token_endpoint: "https://idp/token", client_id: k, client_secret_env: X, token_endpoint_ca_file: ` + top + `}
listeners:
  sasl: {mechanisms: [OAUTHBEARER], oauthbearer: {jwks_url: "https://idp/jwks", issuer: i, jwks_ca_file: ` + top + `}}
virtual_clusters:
  - {name: a, listeners: {bootstrap_port: 19092, broker_port_base: 19100}, topic_prefix: a.}
  - name: b
    listeners:
      bootstrap_port: 19192
      broker_port_base: 19200
      sasl: {mechanisms: [OAUTHBEARER], oauthbearer: {jwks_url: "https://other/jwks", issuer: o, jwks_ca_file: ` + own + `}}
    upstream:
      bootstrap_servers: ["127.0.0.1:9093"]
      sasl: {mechanism: OAUTHBEARER, token_endpoint: "https://other/token", client_id: k, client_secret_env: X, token_endpoint_ca_file: ` + own + `}
    topic_prefix: b.
`))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{top, own} {
		c := cfg.Clusters()[i].Config
		if got := c.Listeners.SASL.OAuthBearer.JWKSCAFile; got != want {
			t.Errorf("%s: jwks_ca_file %q, want %q", cfg.VirtualClusters[i].Name, got, want)
		}
		if got := c.Upstream.SASL.TokenEndpointCAFile; got != want {
			t.Errorf("%s: token_endpoint_ca_file %q, want %q", cfg.VirtualClusters[i].Name, got, want)
		}
	}
}

// TestSingleClusterIsOneCluster: a file without virtual_clusters is served
// as it always was, as one unnamed cluster.
func TestSingleClusterIsOneCluster(t *testing.T) {
	cfg, err := Parse(strings.NewReader(`upstream: {bootstrap_servers: ["127.0.0.1:9092"]}
listeners: {bootstrap_port: 9092}`))
	if err != nil {
		t.Fatal(err)
	}
	cl := cfg.Clusters()
	if len(cl) != 1 || cl[0].Name != "" || cl[0].Config != cfg {
		t.Errorf("clusters %+v: want the file itself, unnamed", cl)
	}
}

func TestVirtualClustersRejects(t *testing.T) {
	base := "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\n"
	tests := []struct{ name, yaml, want string }{
		{"port used twice", base + `virtual_clusters:
  - {name: a, listeners: {bootstrap_port: 9092}, topic_prefix: a.}
  - {name: b, listeners: {bootstrap_port: 9092}, topic_prefix: b.}`,
			"virtual_clusters[1].listeners.bootstrap_port: 9092 is already used by virtual_clusters[0]"},
		{"bootstrap port on another's broker base", base + `virtual_clusters:
  - {name: a, listeners: {bootstrap_port: 9092, broker_port_base: 9100}, topic_prefix: a.}
  - {name: b, listeners: {bootstrap_port: 9100}, topic_prefix: b.}`,
			"virtual_clusters[1].listeners.bootstrap_port: 9100 is already used by virtual_clusters[0] (listeners.broker_port_base)"},
		{"duplicate name", base + `virtual_clusters:
  - {name: a, listeners: {}, topic_prefix: a.}
  - {name: a, listeners: {}, topic_prefix: b.}`,
			`virtual_clusters[1].name: "a" already used by virtual_clusters[0]`},
		{"bad name", base + `virtual_clusters: [{name: "a b", listeners: {}}]`, `virtual_clusters[0].name: "a b": required`},
		{"no listeners", base + `virtual_clusters: [{name: a}]`, "virtual_clusters[0].listeners: required"},
		{"overlapping topic prefixes", base + `virtual_clusters:
  - {name: a, listeners: {}, topic_prefix: team, group_prefix: a.}
  - {name: b, listeners: {}, topic_prefix: team-b., group_prefix: b.}`,
			`virtual_clusters[1].topic_prefix: "team-b." overlaps virtual_clusters[0].topic_prefix "team"`},
		{"empty group prefix beside another", base + `virtual_clusters:
  - {name: a, listeners: {}, topic_prefix: a.}
  - {name: b, listeners: {}, topic_prefix: b., group_prefix: b.}`,
			`virtual_clusters[1].group_prefix: "b." overlaps virtual_clusters[0].group_prefix ""`},
		{"topic prefixes colliding under Kafka's rule", base + `virtual_clusters:
  - {name: acme-a, listeners: {}, topic_prefix: acme.a., group_prefix: acme-a., transactional_id_prefix: acme-a.}
  - {name: acme-x, listeners: {}, topic_prefix: acme_a., group_prefix: acme-x., transactional_id_prefix: acme-x.}`,
			`virtual_clusters[1].topic_prefix: "acme_a." collides with virtual_clusters[0].topic_prefix "acme.a." on the same upstream`},
		{"group prefixes colliding under Kafka's rule", base + `virtual_clusters:
  - {name: a, listeners: {}, topic_prefix: a., group_prefix: g.a, transactional_id_prefix: a.}
  - {name: b, listeners: {}, topic_prefix: b., group_prefix: g_a_b., transactional_id_prefix: b.}`,
			`virtual_clusters[1].group_prefix: "g_a_b." collides with virtual_clusters[0].group_prefix "g.a"`},
		{"transactional id prefixes colliding under Kafka's rule", base + `virtual_clusters:
  - {name: a, listeners: {}, topic_prefix: a., group_prefix: a., transactional_id_prefix: t_a.}
  - {name: b, listeners: {}, topic_prefix: b., group_prefix: b., transactional_id_prefix: t.a.}`,
			`virtual_clusters[1].transactional_id_prefix: "t.a." collides with virtual_clusters[0].transactional_id_prefix "t_a."`},
		{"bad cluster operator", base + `virtual_clusters: [{name: a, listeners: {}, cluster_operators: ["User:ops", "ops"]}]`,
			`virtual_clusters[0].cluster_operators[1]: "ops" is not a principal matcher`},
		{"illegal topic prefix", base + `virtual_clusters: [{name: a, listeners: {}, topic_prefix: "a/"}]`, `virtual_clusters[0].topic_prefix: "a/"`},
		{"cluster id with a space", base + `virtual_clusters: [{name: a, listeners: {}, cluster_id: "a b"}]`, `virtual_clusters[0].cluster_id: "a b"`},
		{"top-level port not served", base + `listeners: {bootstrap_port: 9092}
virtual_clusters: [{name: a, listeners: {}}]`, "listeners.bootstrap_port: not served when virtual_clusters is set"},
		{"its own listener key", base + `virtual_clusters: [{name: a, listeners: {broker_port_base: 70000}}]`,
			"virtual_clusters[0].listeners.broker_port_base: 70000: must be a TCP port"},
		{"its own policy", base + `virtual_clusters: [{name: a, listeners: {}, policy: {default: maybe}}]`,
			`virtual_clusters[0].policy.default: "maybe"`},
		{"its own upstream", base + `virtual_clusters: [{name: a, listeners: {}, upstream: {bootstrap_servers: [nope]}}]`,
			`virtual_clusters[0].upstream.bootstrap_servers[0]: "nope" is not host:port`},
		{"embedded in a virtual cluster", base + `virtual_clusters: [{name: a, listeners: {}, upstream: {embedded: {}}}]`,
			"virtual_clusters[0].upstream.embedded: not supported in a virtual cluster"},
		{"its own sasl", base + `virtual_clusters: [{name: a, listeners: {sasl: {mode: sideways}}}]`,
			`virtual_clusters[0].listeners.sasl.mode: "sideways"`},
		{"its own jwks_ca_file with a jwks_file", base + `virtual_clusters: [{name: a, listeners: {sasl: {mechanisms: [OAUTHBEARER],
    oauthbearer: {jwks_file: /keys.json, issuer: i, jwks_ca_file: /ca.pem}}}}]`,
			"virtual_clusters[0].listeners.sasl.oauthbearer.jwks_ca_file: only with jwks_url"},
		{"its own token_endpoint_ca_file", base + `virtual_clusters: [{name: a, listeners: {}, upstream: {bootstrap_servers: ["127.0.0.1:9092"],
    sasl: {mechanism: PLAIN, username: u, password_env: P, token_endpoint_ca_file: /x.pem}}}]`,
			`virtual_clusters[0].upstream.sasl.token_endpoint_ca_file: only for mechanism OAUTHBEARER (mechanism is "PLAIN")`},
		{"unknown key", base + `virtual_clusters: [{name: a, listeners: {}, topic_prefx: a.}]`, `unknown key "topic_prefx"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// TestVirtualClusterInheritedProblemReportedOnce: a problem in a section
// virtual clusters inherit is reported at its own key only, not once more
// per virtual cluster.
func TestVirtualClusterInheritedProblemReportedOnce(t *testing.T) {
	_, err := Parse(strings.NewReader(`upstream: {bootstrap_servers: ["127.0.0.1:9092"]}
policy: {default: maybe}
virtual_clusters:
  - {name: a, listeners: {}, topic_prefix: a., group_prefix: a., transactional_id_prefix: a.}
  - {name: b, listeners: {}, topic_prefix: b., group_prefix: b., transactional_id_prefix: b.}`))
	if err == nil || strings.Count(err.Error(), `"maybe"`) != 1 || !strings.Contains(err.Error(), `policy.default: "maybe"`) {
		t.Errorf("error %v: want policy.default reported once", err)
	}
}

// TestVirtualClusterPolicyReloadNeedsNoRestart: a virtual cluster's policy
// is applied by a reload; its listeners are not.
func TestVirtualClusterPolicyReloadNeedsNoRestart(t *testing.T) {
	old, err := Parse(strings.NewReader(twoTenants))
	if err != nil {
		t.Fatal(err)
	}
	policyChanged, err := Parse(strings.NewReader(strings.Replace(twoTenants, "{default: deny}", "{default: allow}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if keys := RestartNeeded(old, policyChanged); len(keys) != 0 {
		t.Errorf("a virtual cluster's policy change needs a restart of %v", keys)
	}
	portChanged, err := Parse(strings.NewReader(strings.Replace(twoTenants, "19192", "19193", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if keys := RestartNeeded(old, portChanged); len(keys) != 1 || keys[0] != "virtual_clusters" {
		t.Errorf("a virtual cluster's port change: restart of %v, want [virtual_clusters]", keys)
	}
}

// TestRedactedVirtualClusters: a virtual cluster's credentials are
// redacted like the top level's.
func TestRedactedVirtualClusters(t *testing.T) {
	cfg := &Config{VirtualClusters: []VirtualCluster{{Name: "a",
		Listeners: &Listeners{SASL: &ListenerSASL{Users: []SASLUser{{Name: "u", Credentials: []string{"secret-cred"}}}}},
		Upstream:  &Upstream{SASL: &UpstreamSASL{Password: "hunter2"}}}}}
	r := cfg.Redacted().VirtualClusters[0]
	if r.Upstream.SASL.Password != RedactedValue || r.Listeners.SASL.Users[0].Credentials[0] != RedactedValue {
		t.Errorf("not redacted: %+v %+v", r.Upstream.SASL, r.Listeners.SASL)
	}
	if cfg.VirtualClusters[0].Upstream.SASL.Password != "hunter2" {
		t.Error("Redacted changed the original")
	}
}

func TestParsePrincipalVirtualCluster(t *testing.T) {
	for _, s := range []string{"VirtualCluster:team-a", "virtual_cluster:team-*"} {
		pm, err := policyconfig.ParsePrincipal(s)
		if err != nil || pm.Kind != policyconfig.PrincipalVirtualCluster {
			t.Errorf("%s: %+v, %v", s, pm, err)
		}
	}
	if _, err := policyconfig.ParsePrincipal("VirtualCluster:"); err == nil {
		t.Error("VirtualCluster: with no name accepted")
	}
}

// TestVirtualClusterWarnings: a tenant reachable without authentication,
// and a user two tenants accept (both inherit the top level's users), are
// warned of; a tenant with users of its own is not.
func TestVirtualClusterWarnings(t *testing.T) {
	cred := securityCred(t, "SCRAM-SHA-512", "p")
	cfg, err := Parse(strings.NewReader(`upstream: {bootstrap_servers: ["127.0.0.1:9092"]}
listeners: {sasl: {users: [{name: shared, credentials: ["` + cred + `"]}]}}
virtual_clusters:
  - {name: a, listeners: {}, topic_prefix: a., group_prefix: a., transactional_id_prefix: a.}
  - {name: b, listeners: {}, topic_prefix: b., group_prefix: b., transactional_id_prefix: b.}
  - {name: c, listeners: {sasl: {users: [{name: own, credentials: ["` + cred + `"]}]}}, topic_prefix: c., group_prefix: c., transactional_id_prefix: c.}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cfg.PolicyWarnings(), "\n")
	if !strings.Contains(got, `virtual_clusters[1].listeners.sasl: user "shared" can also log in to virtual_clusters[0] (a)`) || strings.Contains(got, "virtual_clusters[2]") {
		t.Errorf("warnings:\n%s", got)
	}
	open, err := Parse(strings.NewReader(`upstream: {bootstrap_servers: ["127.0.0.1:9092"]}
virtual_clusters:
  - {name: a, listeners: {}, topic_prefix: a., group_prefix: a., transactional_id_prefix: a.}
  - {name: b, listeners: {}, topic_prefix: b., group_prefix: b., transactional_id_prefix: b.}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(open.PolicyWarnings(), "\n"); !strings.Contains(got, "virtual_clusters[1].listeners: no sasl and no tls.client_auth: require: anyone who reaches its ports is a client of b") {
		t.Errorf("warnings of unauthenticated tenants:\n%s", got)
	}
}

// A cluster operator any client can claim is warned of, naming the key.
func TestVirtualClusterOperatorAnyoneClaimsWarned(t *testing.T) {
	cfg, err := Parse(strings.NewReader(`upstream: {bootstrap_servers: ["127.0.0.1:9092"]}
virtual_clusters:
  - {name: a, listeners: {}, topic_prefix: a., cluster_operators: ["User:ops", "client_id:admin", "*"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cfg.PolicyWarnings(), "\n")
	for _, want := range []string{`virtual_clusters[0].cluster_operators[1]: "client_id:admin" is a principal any client can claim`,
		`virtual_clusters[0].cluster_operators[2]: "*" is a principal any client can claim`} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings:\n%s\nwant %s", got, want)
		}
	}
	if strings.Contains(got, "cluster_operators[0]") {
		t.Errorf("User:ops warned of:\n%s", got)
	}
}
