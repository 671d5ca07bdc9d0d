package tenant

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// adminEnv is two virtual clusters, team-a and team-b, in front of one
// 3-node kfake cluster. Each terminates SASL PLAIN for its own users
// (password: NAME-secret): team-a's tenant alice and its cluster operator
// ops-a (virtual_clusters[0].cluster_operators), team-b's tenant bob.
type adminEnv struct {
	t        *testing.T
	cluster  *kfake.Cluster
	kproxy   *testkit.Binary
	upstream *kgo.Client // straight to kfake, as the cluster's operator sees it

	mu   sync.Mutex
	seen map[int16]int // requests kfake received, by key, since watch
}

func newAdminEnv(t *testing.T) *adminEnv {
	t.Helper()
	c := testkit.Cluster(t, 3)
	e := &adminEnv{t: t, cluster: c, seen: map[int16]int{}}
	cfg := fmt.Sprintf(`upstream: {bootstrap_servers: ["%s"]}
listeners: {bind_host: 127.0.0.1}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
virtual_clusters:
  - name: team-a
    listeners:
      bootstrap_port: 0
      broker_port_base: 0
      sasl: {mode: terminate, mechanisms: [PLAIN], users: [%s, %s]}
    topic_prefix: team-a.
    group_prefix: team-a.
    transactional_id_prefix: team-a.
    cluster_operators: ["User:ops-a"]
  - name: team-b
    listeners:
      bootstrap_port: 0
      broker_port_base: 0
      sasl: {mode: terminate, mechanisms: [PLAIN], users: [%s]}
    topic_prefix: team-b.
    group_prefix: team-b.
    transactional_id_prefix: team-b.
`, strings.Join(c.ListenAddrs(), `", "`), adminUser(t, "alice"), adminUser(t, "ops-a"), adminUser(t, "bob"))
	e.kproxy = advkit.Start(t, cfg)
	var err error
	if e.upstream, err = kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.upstream.Close)
	return e
}

// adminUser is a listeners.sasl.users entry for name (PLAIN password
// NAME-secret; few iterations: a test's logins need no strength).
func adminUser(t *testing.T, name string) string {
	t.Helper()
	cred, err := auth.HashPassword(auth.ScramSHA512, name+"-secret", 4096)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("{name: %s, credentials: [%q]}", name, cred)
}

// dialAs is a raw connection to virtual cluster vc, logged in as user.
func (e *adminEnv) dialAs(vc, user string) *testkit.RawConn {
	e.t.Helper()
	c := testkit.DialRaw(e.t, e.kproxy.VirtualClusterBootstrap(vc), "adversary-"+user)
	c.LoginPLAIN(e.t, user, user+"-secret")
	return c
}

// watch starts counting the requests kfake receives of keys, from any
// client: an attack answered by kproxy leaves the count at zero.
func (e *adminEnv) watch(keys ...kmsg.Key) {
	for _, k := range keys {
		e.cluster.ControlKey(int16(k), func(req kmsg.Request) (kmsg.Response, error, bool) {
			e.mu.Lock()
			e.seen[req.Key()]++
			e.mu.Unlock()
			return nil, nil, false // observe only: kfake answers as usual
		})
	}
}

// received is how many requests of key kfake got since watch.
func (e *adminEnv) received(k kmsg.Key) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seen[int16(k)]
}

// ask sends req straight to kfake.
func (e *adminEnv) ask(req kmsg.Request) kmsg.Response {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := e.upstream.Request(ctx, req)
	if err != nil {
		e.t.Fatalf("upstream %s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

// createTopic creates topic (an upstream name) straight at kfake.
func (e *adminEnv) createTopic(topic string) {
	e.t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, 1, 1
	req.Topics = append(req.Topics, ct)
	if r := e.ask(req).(*kmsg.CreateTopicsResponse); len(r.Topics) != 1 || r.Topics[0].ErrorCode != 0 {
		e.t.Fatalf("creating %s upstream: %+v", topic, r.Topics)
	}
}
