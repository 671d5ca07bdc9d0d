package tenant

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// sessionTenants are the two virtual clusters of the fetch-session
// attacks: team-b is the victim, team-a the attacker.
var sessionTenants = []string{"team-a", "team-b"}

// sessionConfig is a kproxy configuration serving both tenants in front of
// upstream with the usual distinct prefixes; policies[name] is that
// tenant's policy section (none when missing).
func sessionConfig(upstream []string, policies map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "upstream: {bootstrap_servers: [\"%s\"]}\nlisteners: {bind_host: 127.0.0.1}\nadmin: {listen: \"127.0.0.1:0\"}\nlog: {level: info, format: json}\nvirtual_clusters:\n",
		strings.Join(upstream, `", "`))
	for _, name := range sessionTenants {
		fmt.Fprintf(&b, "  - name: %s\n    listeners: {bootstrap_port: 0, broker_port_base: 0}\n    topic_prefix: %[1]s.\n    group_prefix: %[1]s.\n    transactional_id_prefix: %[1]s.\n", name)
		if p := policies[name]; p != "" {
			fmt.Fprintf(&b, "    policy: %s\n", p)
		}
	}
	return b.String()
}

// sessionVictim is team-b's topic with a record in it, and where it is.
type sessionVictim struct {
	topic   string
	id      [16]byte
	leader  int32
	secret  []byte
	version int16 // the Fetch version both tenants' raw connections use
}

// sessionCreateVictim creates topic in the tenant served at bootstrap
// (one partition), produces a secret record to it, and deletes the topic
// when the test ends.
func sessionCreateVictim(t *testing.T, bootstrap, topic string) sessionVictim {
	t.Helper()
	cl := testkit.Client(t, kgo.SeedBrokers(bootstrap))
	adm := kadm.NewClient(cl)
	ctx := testkit.Context(t, 30*time.Second)
	if _, err := adm.CreateTopic(ctx, 1, -1, nil, topic); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	t.Cleanup(func() { adm.DeleteTopics(testkit.Context(t, 30*time.Second), topic) })
	secret := []byte("team-b-secret-" + topic)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: secret}).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
	v := sessionVictim{topic: topic, secret: secret, leader: -1}
	meta := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, rt)
	resp, err := meta.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("metadata of %s: %v %+v", topic, err, resp)
	}
	v.id, v.leader = resp.Topics[0].TopicID, resp.Topics[0].Partitions[0].Leader
	return v
}

// sessionBrokerConn is a raw connection to node's listener of the tenant
// served at bootstrap, and the Fetch version it speaks (at least 13).
func sessionBrokerConn(t *testing.T, bootstrap string, node int32, clientID string) (*testkit.RawConn, int16) {
	t.Helper()
	boot := testkit.DialRaw(t, bootstrap, clientID)
	meta := boot.MustRoundTrip(t, kmsg.NewPtrMetadataRequest()).(*kmsg.MetadataResponse)
	for _, b := range meta.Brokers {
		if b.NodeID == node {
			c := testkit.DialRaw(t, fmt.Sprintf("%s:%d", b.Host, b.Port), clientID)
			v := c.Versions(t)[int16(kmsg.Fetch)]
			if v < 13 {
				t.Fatalf("fetch v%d: these attacks name topics by id (v13+)", v)
			}
			return c, v
		}
	}
	t.Fatalf("node %d is not among %s's brokers %+v", node, bootstrap, meta.Brokers)
	return nil, 0
}

// sessionFetch is a Fetch at version with session id and epoch, of the
// first partition of topic id (none when id is zero: an incremental fetch
// that changes nothing).
func sessionFetch(version int16, id [16]byte, sessionID, epoch int32) *kmsg.FetchRequest {
	req := testkit.FetchByID(version)
	if id != ([16]byte{}) {
		req = testkit.FetchByID(version, id)
	}
	req.SessionID, req.SessionEpoch = sessionID, epoch
	return req
}

// sessionAnswer sends req on c and returns the decoded response and the
// frame with its correlation id zeroed, for comparing answers across
// connections byte for byte.
func sessionAnswer(t *testing.T, c *testkit.RawConn, req *kmsg.FetchRequest) ([]byte, *kmsg.FetchResponse) {
	t.Helper()
	frame, resp := c.MustExchange(t, req)
	return testkit.WithoutCorrelation(frame), resp.(*kmsg.FetchResponse)
}
