package tenant

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// Kafka treats '.' and '_' as one character when it checks a new topic
// name for collisions: prefixes "acme.a." and "acme_a." on one upstream
// would let tenant acme-x probe for and squat on acme-a's names. The real
// binary's validate refuses them, naming both keys; so for group and
// transactional-id prefixes.
func TestNamesValidateRefusesCollidingPrefixes(t *testing.T) {
	for _, tc := range []struct{ kind, a, x, want string }{
		{"topic_prefix", "acme.a.", "acme_a.", `virtual_clusters[1].topic_prefix: "acme_a." collides with virtual_clusters[0].topic_prefix "acme.a."`},
		{"group_prefix", "acme.a.", "acme_a.", `virtual_clusters[1].group_prefix: "acme_a." collides with virtual_clusters[0].group_prefix "acme.a."`},
		{"transactional_id_prefix", "acme_a_", "acme.a.", `virtual_clusters[1].transactional_id_prefix: "acme.a." collides with virtual_clusters[0].transactional_id_prefix "acme_a_"`},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			prefixes := map[string][2]string{"topic_prefix": {"a-t.", "x-t."}, "group_prefix": {"a-g.", "x-g."}, "transactional_id_prefix": {"a-x.", "x-x."}}
			prefixes[tc.kind] = [2]string{tc.a, tc.x}
			var b strings.Builder
			b.WriteString("upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\nvirtual_clusters:\n")
			for i, name := range []string{"acme-a", "acme-x"} {
				fmt.Fprintf(&b, "  - name: %s\n    listeners: {bootstrap_port: 0, broker_port_base: 0}\n", name)
				for _, k := range []string{"topic_prefix", "group_prefix", "transactional_id_prefix"} {
					fmt.Fprintf(&b, "    %s: %q\n", k, prefixes[k][i])
				}
			}
			path := testkit.WriteConfig(t, b.String())
			out, err := exec.Command(testkit.SharedKproxy(t), "validate", "--config", path).CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Fatalf("validate: %v, want exit 1; output:\n%s", err, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("validate output:\n%s\nwant it to contain %s", out, tc.want)
			}
		})
	}
}

// namesRealBrokerCollision is a broker's answer to creating a name that
// collides, by Kafka's rule, with an existing topic (the text of
// Apache Kafka's ReplicationControlManager), for kfake, which answers the
// error without the message.
func namesRealBrokerCollision(topic, existing string) string {
	return fmt.Sprintf("Topic '%s' collides with existing topic: %s", topic, existing)
}

// namesCollidingUpstream makes kfake answer a CreateTopics whose one topic
// collides with one of existing (upstream names) as a real broker does,
// message included; any other it handles itself.
func namesCollidingUpstream(e *adminEnv, existing ...string) {
	unify := func(s string) string { return strings.ReplaceAll(s, ".", "_") }
	var mu sync.Mutex
	e.cluster.ControlKey(int16(kmsg.CreateTopics), func(req kmsg.Request) (kmsg.Response, error, bool) {
		e.cluster.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		r := req.(*kmsg.CreateTopicsRequest)
		if len(r.Topics) != 1 {
			return nil, nil, false
		}
		for _, x := range existing {
			if t := r.Topics[0].Topic; t != x && unify(t) == unify(x) {
				resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
				rt := kmsg.NewCreateTopicsResponseTopic()
				rt.Topic, rt.ErrorCode = t, kerr.InvalidTopicException.Code
				rt.ErrorMessage = kmsg.StringPtr(namesRealBrokerCollision(t, x))
				resp.Topics = append(resp.Topics, rt)
				return resp, nil, true
			}
		}
		return nil, nil, false
	})
}

// acme-x creates a topic whose upstream name collides with a topic outside
// its prefix (the operator's acme-x_orders beside acme-x.orders): Kafka's
// answer names that topic. The tenant gets INVALID_TOPIC_EXCEPTION, as from
// Kafka, but no byte of the answer names the foreign topic.
func TestNamesCollisionMessageNamesNoForeignTopic(t *testing.T) {
	e := newAdminEnv(t)             // team-a (prefix team-a.) and team-b (team-b.)
	const foreign = "team-a_orders" // the operator's, outside every prefix
	e.createTopic(foreign)
	namesCollidingUpstream(e, foreign)

	alice := e.dialAs("team-a", "alice")
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(5)
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "orders", 1, 1
	req.Topics = append(req.Topics, ct)
	corr, err := alice.Send(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, resp, err := alice.Receive(req, corr)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.(*kmsg.CreateTopicsResponse)
	if len(r.Topics) != 1 || r.Topics[0].Topic != "orders" || r.Topics[0].ErrorCode != kerr.InvalidTopicException.Code {
		t.Fatalf("creating orders: %+v, want orders INVALID_TOPIC_EXCEPTION", r.Topics)
	}
	if bytes.Contains(raw, []byte(foreign)) || bytes.Contains(raw, []byte("team-a")) {
		t.Errorf("the answer names a topic outside the tenant's names: %q (message %q)", raw, derefMessage(r.Topics[0].ErrorMessage))
	}
	t.Logf("the tenant's message: %q", derefMessage(r.Topics[0].ErrorMessage))
}

// The same attack against a real Kafka cluster, whose broker writes the
// collision message itself.
func TestNamesCollisionMessageRealKafka(t *testing.T) {
	addrs := testkit.RealKafka(t)
	run := fmt.Sprintf("adv%d", time.Now().UnixNano()%1_000_000_000)
	kp := advkit.Start(t, fmt.Sprintf(`upstream: {bootstrap_servers: ["%s"]}
listeners: {bind_host: 127.0.0.1}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
virtual_clusters:
  - {name: acme-x, listeners: {bootstrap_port: 0, broker_port_base: 0}, topic_prefix: "%[2]s-x.", group_prefix: "%[2]s-x.", transactional_id_prefix: "%[2]s-x."}
`, strings.Join(addrs, `", "`), run))
	up, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	foreign := run + "-x_orders"
	create := func(cl *kgo.Client, topic string) kmsg.CreateTopicsResponseTopic {
		req := kmsg.NewPtrCreateTopicsRequest()
		ct := kmsg.NewCreateTopicsRequestTopic()
		ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, 1, -1
		req.Topics = append(req.Topics, ct)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || len(resp.Topics) != 1 {
			t.Fatalf("create %s: %v %+v", topic, err, resp)
		}
		return resp.Topics[0]
	}
	if r := create(up, foreign); r.ErrorCode != 0 {
		t.Fatalf("creating %s upstream: %+v", foreign, r)
	}
	t.Cleanup(func() {
		del := kmsg.NewPtrDeleteTopicsRequest()
		dt := kmsg.NewDeleteTopicsRequestTopic()
		dt.Topic = kmsg.StringPtr(foreign)
		del.Topics = append(del.Topics, dt)
		del.TopicNames = []string{foreign}
		del.RequestWith(context.Background(), up)
	})
	tenant, err := kgo.NewClient(kgo.SeedBrokers(kp.VirtualClusterBootstrap("acme-x")))
	if err != nil {
		t.Fatal(err)
	}
	defer tenant.Close()
	r := create(tenant, "orders")
	if r.ErrorCode != kerr.InvalidTopicException.Code {
		t.Fatalf("creating orders through kproxy: %+v, want INVALID_TOPIC_EXCEPTION", r)
	}
	if msg := derefMessage(r.ErrorMessage); strings.Contains(msg, foreign) || strings.Contains(msg, run) {
		t.Errorf("the tenant's message names a topic outside its names: %q", msg)
	}
}

func derefMessage(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
