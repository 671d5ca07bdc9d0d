package conformance

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/idp"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/seaweed"
)

const (
	partitions = 6
	// SCRAM user kproxy's secure listener knows (SCRAM-SHA-512 and -256).
	saslUser = "alice"
	saslPass = "alice-secret"
)

// runID makes topic and group names unique per run, so that a real cluster
// reused between runs never hands one run another's data.
var runID = strconv.FormatInt(time.Now().UnixMilli()%1e8, 36)

func realDescription() string {
	if b := testkit.RealKafkaBootstrap(); b != nil {
		return "Apache Kafka at " + strings.Join(b, ",")
	}
	return "no real cluster (KPROXY_KAFKA_BOOTSTRAP unset: its cells are SKIP)"
}

// env is one upstream with the kproxies in front of it.
type env struct {
	name     string // "kfake" or "kafka"
	real     bool
	upstream []string // the upstream's own listeners: never to be seen by a client
	ports    map[int]bool
	cluster  *kfake.Cluster // kfake only
	plain    *kproxytest.Kproxy
	secure   *kproxytest.Kproxy // TLS + SASL (SCRAM-SHA-512/256, PLAIN) terminated by kproxy
	// sni is secure's configuration on listeners.sni alone (sni_test.go);
	// sniSkip, if set, is why the sni cells cannot run.
	sni     *kproxytest.Kproxy
	sniSkip string
	// oauth terminates TLS and OAUTHBEARER with tokens of idp and enforces
	// the oauth scenario's policy (oauth_test.go).
	oauth *kproxytest.Kproxy
	idp   *idp.IdP
	// upSCRAM and upOAuth are secure's client side in front of the real
	// cluster's SASL_SSL listener (upstream_security_test.go); upSkip, if
	// set, is why the upstream-* cells cannot run.
	upSCRAM, upOAuth *kproxytest.Kproxy
	upSkip           string
	// vc is a virtual cluster's engine, every name prefixed
	// (virtualcluster_test.go).
	vc    *kproxytest.Kproxy
	pki   certs.Files
	nodes []int32 // upstream node ids
	skip  string  // every cell of this upstream skips with this reason

	// enc encrypts the encryption scenario's topics with a KEK in
	// local-kms (encryption_test.go); encSkip, if set, is why it cannot.
	enc     *kproxytest.Kproxy
	encSkip string

	// lm offloads the large-messages scenario's large values to lmStore
	// (largemessages_test.go); lmSkip, if set, is why it cannot run, and
	// lmErr is why lm did not start.
	lm      *kproxytest.Kproxy
	lmStore *seaweed.Server
	lmSkip  string
	lmErr   error

	mu     sync.Mutex
	topics []string
}

// newEnv starts the upstream (kfake) or checks it (real) and starts kproxy
// in front of it, both plaintext and secure.
func newEnv(t *testing.T, name string) *env {
	t.Helper()
	e := &env{name: name, ports: map[int]bool{}}
	switch name {
	case "kfake":
		e.cluster = testkit.Cluster(t, 3, kfake.DefaultNumPartitions(partitions))
		e.upstream = e.cluster.ListenAddrs()
	case "kafka":
		e.real = true
		e.upstream = testkit.RealKafkaBootstrap()
		if e.upstream == nil {
			e.skip = "no real Kafka cluster: set KPROXY_KAFKA_BOOTSTRAP (test/kafka/cluster.sh start prints it)"
			return e
		}
		for _, a := range e.upstream {
			c, err := net.DialTimeout("tcp", a, 3*time.Second)
			if err != nil {
				t.Fatalf("KPROXY_KAFKA_BOOTSTRAP names %s, which does not answer: %v", a, err)
			}
			c.Close()
		}
	default:
		t.Fatalf("unknown upstream %q", name)
	}
	for _, a := range e.upstream {
		_, p, _ := net.SplitHostPort(a)
		n, _ := strconv.Atoi(p)
		e.ports[n] = true
	}
	e.plain = kproxytest.Start(t, testkit.Config{Upstream: e.upstream}.YAML())
	e.pki = certs.New(t)
	e.secure = kproxytest.Start(t, secureYAML(t, e.pki, e.upstream))
	e.startOAuth(t)
	e.nodes = e.upstreamNodes(t)
	if len(e.nodes) < 3 {
		t.Fatalf("%s: upstream lists %d brokers (%v), want 3", name, len(e.nodes), e.nodes)
	}
	e.startSNI(t)
	e.startVirtualCluster(t)
	e.startEncryption(t)
	e.startLargeMessages(t)
	if e.real {
		e.startUpstreamSecurity(t)
	}
	if e.real {
		t.Cleanup(e.deleteTopics)
	}
	return e
}

// secureYAML: kproxy terminates TLS and SASL (SCRAM-SHA-512, SCRAM-SHA-256
// and PLAIN for user alice) and reaches the upstream in plaintext.
func secureYAML(t *testing.T, p certs.Files, upstream []string) string {
	t.Helper()
	return secureYAMLWith(t, p, upstream, "")
}

// secureYAMLWith is secureYAML with more upstream keys (upstreamKeys:
// YAML lines indented by two spaces), such as upstream.tls and .sasl.
func secureYAMLWith(t *testing.T, p certs.Files, upstream []string, upstreamKeys string) string {
	t.Helper()
	return secureYAMLUsers(t, p, upstream, upstreamKeys, scramUser{saslUser, saslPass})
}

// scramUser is a user kproxy's secure listener knows.
type scramUser struct{ name, password string }

// secureYAMLUsers is secureYAMLWith for the given users.
func secureYAMLUsers(t *testing.T, p certs.Files, upstream []string, upstreamKeys string, users ...scramUser) string {
	t.Helper()
	var entries []string
	for _, u := range users {
		var creds []string
		for _, m := range []string{auth.ScramSHA512, auth.ScramSHA256} {
			c, err := auth.HashPassword(m, u.password, 4096)
			if err != nil {
				t.Fatal(err)
			}
			creds = append(creds, strconv.Quote(c))
		}
		entries = append(entries, fmt.Sprintf("{name: %s, credentials: [%s]}", u.name, strings.Join(creds, ", ")))
	}
	return tlsListenerYAML(p, upstream, upstreamKeys) + fmt.Sprintf(`  sasl:
    mode: terminate
    mechanisms: [SCRAM-SHA-512, SCRAM-SHA-256, PLAIN]
    users: [%s]
log: {level: warn}
`, strings.Join(entries, ", "))
}

// tlsListenerYAML begins a kproxy configuration that reaches upstream
// (in plaintext unless upstreamKeys, YAML lines indented by two spaces,
// say otherwise) and serves TLS with p's server certificate; more
// listeners keys (indented two spaces) and other sections follow it.
func tlsListenerYAML(p certs.Files, upstream []string, upstreamKeys string) string {
	return fmt.Sprintf(`
upstream:
  bootstrap_servers: ["%s"]
  dial_timeout: 5s
%slisteners:
  bind_host: 127.0.0.1
  tls: {cert_file: %q, key_file: %q}
`, strings.Join(upstream, `", "`), upstreamKeys, p.ServerCert, p.ServerKey)
}

// bootstrap is the plaintext kproxy's bootstrap address.
func (e *env) bootstrap() string { return e.plain.BootstrapAddr() }

// kgoClient is a franz-go client through the plaintext kproxy, closed when
// the test ends.
func (e *env) kgoClient(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return testkit.Client(t, append([]kgo.Opt{kgo.SeedBrokers(e.bootstrap())}, opts...)...)
}

func (e *env) admin(t testing.TB) *kadm.Client {
	t.Helper()
	return kadm.NewClient(e.kgoClient(t))
}

// upstreamNodes lists the upstream's node ids (through kproxy).
func (e *env) upstreamNodes(t *testing.T) []int32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.bootstrap()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		t.Fatalf("%s: metadata through kproxy: %v", e.name, err)
	}
	var ids []int32
	for _, b := range md.Brokers {
		ids = append(ids, b.NodeID)
	}
	slices.Sort(ids)
	return ids
}

var nameRE = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// name makes a topic or group name unique to this cell and run.
func name(c *cellCtx, suffix string) string {
	n := fmt.Sprintf("conf-%s-%s-%s-%s", c.key.client, c.key.scenario, suffix, runID)
	return nameRE.ReplaceAllString(n, "-")
}

// newTopic creates a topic with n partitions (replication factor: the
// upstream's default) through kproxy and waits until every partition has a
// leader. On the real cluster it is deleted at the end of the run.
func (e *env) newTopic(t *testing.T, c *cellCtx, suffix string, n int32) string {
	t.Helper()
	return e.newTopicNamed(t, name(c, suffix), n)
}

// newTopicNamed is newTopic with the whole name given.
func (e *env) newTopicNamed(t *testing.T, topic string, n int32) string {
	t.Helper()
	adm := e.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, n, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s through kproxy: %v", topic, err)
	}
	e.mu.Lock()
	e.topics = append(e.topics, topic)
	e.mu.Unlock()
	e.waitTopic(t, ctx, adm, topic, n)
	e.waitTopicOnEveryBroker(t, ctx, topic, n)
	return topic
}

// waitTopicOnEveryBroker waits until every broker, asked directly, knows
// topic with n partitions that all have leaders. A KRaft broker learns a
// new topic from the metadata log a moment after the one that created it,
// and a client that read metadata from one broker may produce to another:
// kafka-go's Writer, which does not retry it, then failed with
// UNKNOWN_TOPIC_OR_PARTITION.
func (e *env) waitTopicOnEveryBroker(t *testing.T, ctx context.Context, topic string, n int32) {
	t.Helper()
	cl := e.kgoClient(t)
	for _, id := range e.nodes {
		for {
			req := kmsg.NewPtrMetadataRequest()
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(topic)
			req.Topics = append(req.Topics, rt)
			resp, err := req.RequestWith(ctx, cl.Broker(int(id)))
			if err == nil && len(resp.Topics) == 1 && resp.Topics[0].ErrorCode == 0 && len(resp.Topics[0].Partitions) == int(n) && leadersKnown(resp.Topics[0].Partitions) {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("broker %d never knew topic %s with %d partitions with leaders: %v", id, topic, n, err)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

func leadersKnown(ps []kmsg.MetadataResponseTopicPartition) bool {
	for _, p := range ps {
		if p.ErrorCode != 0 || p.Leader < 0 {
			return false
		}
	}
	return true
}

func (e *env) waitTopic(t *testing.T, ctx context.Context, adm *kadm.Client, topic string, n int32) {
	t.Helper()
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil && len(td.Partitions) == int(n) {
				ok := true
				for _, p := range td.Partitions {
					if p.Leader < 0 || p.Err != nil {
						ok = false
					}
				}
				if ok {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topic %s never had %d partitions with leaders: %v", topic, n, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// deleteTopics deletes the run's topics from the real cluster.
func (e *env) deleteTopics() {
	e.mu.Lock()
	topics := e.topics
	e.mu.Unlock()
	if len(topics) == 0 {
		return
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.upstream...))
	if err != nil {
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kadm.NewClient(cl).DeleteTopics(ctx, topics...)
}

// groupCoordinator asks the upstream itself, not kproxy, which node
// coordinates group: the ground truth for what a client is told.
func (e *env) groupCoordinator(t *testing.T, group string) int32 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.upstream...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, ok := kadm.NewClient(cl).FindGroupCoordinators(ctx, group)[group]
	if !ok || r.Err != nil {
		t.Fatalf("the upstream's coordinator for %s: %+v", group, r)
	}
	return r.NodeID
}

// committed sums group's committed offsets over topic's partitions.
func (e *env) committed(t *testing.T, group, topic string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	offsets, err := e.admin(t).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	var sum int64
	offsets.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic {
			if o.Err != nil {
				t.Errorf("group %s partition %d: %v", group, o.Partition, o.Err)
			}
			sum += o.At
		}
	})
	return sum
}

// checkCommitted fails unless group's commits on topic add up to want.
func (e *env) checkCommitted(t *testing.T, group, topic string, want int64) {
	t.Helper()
	// A client's last commit may still be in flight when it returns
	// (kafka-go, librdkafka on close): allow it a moment.
	var got int64
	for deadline := time.Now().Add(10 * time.Second); ; {
		if got = e.committed(t, group, topic); got == want || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got != want {
		t.Errorf("group %s: committed offsets on %s add up to %d, want %d", group, topic, got, want)
	}
}

// checkGroupType fails unless the broker lists group with type typ.
func (e *env) checkGroupType(t *testing.T, group, typ string) {
	t.Helper()
	ctx, cancel := ctxTimeout(20 * time.Second)
	defer cancel()
	lg, err := e.admin(t).ListGroups(ctx)
	if err != nil {
		t.Fatalf("list groups: %v", err)
	}
	if g, ok := lg[group]; !ok {
		t.Errorf("group %s is not listed", group)
	} else if g.GroupType != typ {
		t.Errorf("group %s has type %q, want %q", group, g.GroupType, typ)
	}
}

// proxyAddrs is every address proxy p serves: bootstrap and each node.
func (e *env) proxyAddrs(p *kproxytest.Kproxy) map[string]bool {
	// Through the SNI listener every name resolves to its one port.
	m := map[string]bool{e.seed(p): true, p.SNIAddr(): true}
	for _, id := range e.nodes {
		if a, ok := e.nodeAddr(p, id); ok {
			m[a] = true
		}
	}
	return m
}

// checkAddr fails t unless addr is an address kproxy p advertises for a
// node (or, with bootstrapOK, its bootstrap address).
func (e *env) checkAddr(t *testing.T, p *kproxytest.Kproxy, what, addr string, bootstrapOK bool) {
	t.Helper()
	if slices.Contains(e.upstream, addr) {
		t.Errorf("%s: client was told the upstream address %s", what, addr)
		return
	}
	if bootstrapOK && addr == e.seed(p) {
		return
	}
	for _, id := range e.nodes {
		if a, _ := e.nodeAddr(p, id); a == addr {
			return
		}
	}
	t.Errorf("%s: %s is not a kproxy broker address", what, addr)
}

// checkNodeAddr fails unless addr is what kproxy p advertises for node id.
func (e *env) checkNodeAddr(t *testing.T, p *kproxytest.Kproxy, what string, id int32, addr string) {
	t.Helper()
	want, ok := e.nodeAddr(p, id)
	if !ok || addr != want {
		t.Errorf("%s: node %d at %s, but kproxy serves it at %q", what, id, addr, want)
	}
}

func ctxTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
