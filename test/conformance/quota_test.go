package conformance

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/quota"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/policy"
)

// The quota scenarios: each client produces as fast as it can
// through kproxy to the real cluster under a produce quota, then consumes
// everything back under a fetch quota; a third runs two SASL principals
// with different quotas at once. A cell passes only if the rate over the
// measuring window is within the band (quota_rate_test.go), the client
// itself reported throttle time, no request failed and nothing was lost
// (records acknowledged = records in the log = records consumed).
//
// They run after every other cell (TestQuotas), in parallel with each
// other only, so that the rest of the suite does not take the CPU the
// clients need to go faster than their quotas.
const (
	produceQuota = 5_000_000 // bytes/s: 5 MB/s
	fetchQuota   = 4_000_000 // bytes/s: distinct from the produce quota
	// The principals cell: two users at once, each with its own rate.
	aliceQuota = 5_000_000
	bobQuota   = 2_500_000
	saslUser2  = "bob"
	saslPass2  = "bob-secret"
)

// quotaWindowsYAML: the quota rates are measured over 2 windows of 1 s
// (Kafka: quota.window.num=2, quota.window.size.seconds=1). With Kafka's
// default of 11 windows, a client that can go much faster than its quota
// is admitted a burst of 10 s of quota whenever its oldest window expires
// (about every 12 s): measured on Kafka 4.4 itself, a hungry franz-go
// producer moved 150 MB in 3 s, then 2-6 MB/s for 9 s, and so on. Its
// long-run average is the quota (within 1% over two cycles) but a 20 s
// window holds one or two bursts: -30% to +7%. With 2 windows the burst
// is 1 s of quota, so 20 s measure the rate to a few percent.
const quotaWindowsYAML = "  quota_windows: {samples: 2, size: 1s}\n"

// Request sizes: small against the 4-5 MB a window of quota holds. Kafka
// answers a Fetch that would exceed the fetch quota with no records and a
// throttle time that counts the records it withheld; measured on Kafka
// 4.4 with the default 1 MB per partition (6 MB per response), franz-go
// and librdkafka were held to 2.4-2.7 MB/s under a 4 MB/s fetch quota.
// Still, the time a client waits out its throttle is lost when a window
// expires meanwhile: requests are kept to a few percent of a window. But
// not smaller: the Java consumer has one fetch per broker in flight, and
// with 32 KB per partition it could not go faster than 3.5 MB/s through
// kproxy on busy cores. Produce batches are bounded likewise.
const (
	quotaFetchPartitionBytes = 64 << 10
	quotaFetchMaxBytes       = 256 << 10
	quotaBatchBytes          = 32 << 10
)

// brokerQuotaWindows is the broker setting the calibration needs
// (KPROXY_QUOTA_THROTTLER=broker): the same windows as kproxy's.
const brokerQuotaWindows = "2"

// quotaClientID is each client's client.id; kproxy's plaintext quota
// rules match them (and the broker's, in calibration).
func quotaClientID(client string) string { return "kproxy-quota-" + client }

// quotaClients run quota-produce then quota-fetch.
var quotaClients = []string{"franz-go", "java", "confluent-kafka"}

// quotaEnv is the real cluster with the kproxies the quota cells use.
type quotaEnv struct {
	*env
	// brokerThrottles: the broker's own quotas throttle (calibration of
	// the harness, KPROXY_QUOTA_THROTTLER=broker) and kproxy has none.
	brokerThrottles bool
	quotas          *kproxytest.Kproxy // plaintext, quota rules by client id
	principals      *kproxytest.Kproxy // TLS + SASL, quota rules by user
}

// TestQuotas runs the quota cells against the real cluster: franz-go,
// Kafka's perf tools and confluent-kafka each under a produce and then a
// fetch quota, and two principals at once.
func TestQuotas(t *testing.T) {
	skipUnlessSelected(t, "kafka")
	cells := func(fn func(client, scenario string)) {
		for _, cl := range quotaClients {
			fn(cl, "quota-produce")
			fn(cl, "quota-fetch")
		}
		fn("franz-go", "quota-principals")
	}
	if testkit.RealKafkaBootstrap() == nil {
		cells(func(client, scenario string) {
			runCell(t, "kafka", client, scenario, false, func(t *testing.T, c *cellCtx) {
				skipCell(t, c, "no real Kafka cluster: set KPROXY_KAFKA_BOOTSTRAP (test/kafka/cluster.sh start prints it)")
			})
		})
		return
	}
	q := newQuotaEnv(t)
	t.Run("kafka", func(t *testing.T) {
		for _, cl := range quotaClients {
			t.Run(cl, func(t *testing.T) {
				t.Parallel()
				var topic string
				var acked int64
				runCell(t, "kafka", cl, "quota-produce", false, func(t *testing.T, c *cellCtx) {
					topic = q.newQuotaTopic(t, c)
					acked = quotaProducers[cl](t, c, q, topic)
				})
				runCell(t, "kafka", cl, "quota-fetch", false, func(t *testing.T, c *cellCtx) {
					if topic == "" || acked == 0 {
						t.Fatal("quota-produce produced nothing to consume")
					}
					quotaConsumers[cl](t, c, q, topic, acked)
				})
			})
		}
		t.Run("principals", func(t *testing.T) {
			t.Parallel()
			runCell(t, "kafka", "franz-go", "quota-principals", false, func(t *testing.T, c *cellCtx) {
				franzQuotaPrincipals(t, c, q)
			})
		})
	})
}

// quotaProducers produce to topic under produceQuota and return how many
// records were acknowledged; quotaConsumers consume those n records under
// fetchQuota.
var (
	quotaProducers = map[string]func(t *testing.T, c *cellCtx, q *quotaEnv, topic string) int64{
		"franz-go": franzQuotaProduce, "java": javaQuotaProduce, "confluent-kafka": confluentQuotaProduce,
	}
	quotaConsumers = map[string]func(t *testing.T, c *cellCtx, q *quotaEnv, topic string, n int64){
		"franz-go": franzQuotaFetch, "java": javaQuotaFetch, "confluent-kafka": confluentQuotaFetch,
	}
)

func newQuotaEnv(t *testing.T) *quotaEnv {
	t.Helper()
	q := &quotaEnv{env: newEnv(t, "kafka"), brokerThrottles: os.Getenv("KPROXY_QUOTA_THROTTLER") == "broker"}
	users := []scramUser{{saslUser, saslPass}, {saslUser2, saslPass2}}
	if q.brokerThrottles {
		q.checkBrokerWindows(t)
		for _, cl := range quotaClients {
			q.setBrokerQuota(t, quotaClientID(cl), produceQuota, fetchQuota)
		}
		q.setBrokerQuota(t, quotaClientID(saslUser), aliceQuota, 0)
		q.setBrokerQuota(t, quotaClientID(saslUser2), bobQuota, 0)
		q.quotas = kproxytest.Start(t, testkit.Config{Upstream: q.upstream}.YAML())
		q.principals = kproxytest.Start(t, secureYAMLUsers(t, q.pki, q.upstream, "", users...))
		return q
	}
	q.checkNoBrokerQuotas(t)
	var rules strings.Builder
	rules.WriteString("policy:\n" + quotaWindowsYAML + "  quotas:\n")
	for _, cl := range quotaClients {
		fmt.Fprintf(&rules, "    - {name: %s, principals: [\"client_id:%s\"], produce_bytes_per_second: %d, fetch_bytes_per_second: %d}\n",
			cl, quotaClientID(cl), produceQuota, fetchQuota)
	}
	q.quotas = startQuotaProxy(t, fmt.Sprintf(`
upstream:
  bootstrap_servers: ["%s"]
  dial_timeout: 5s
listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}
log: {level: warn}
`, strings.Join(q.upstream, `", "`))+rules.String())
	principals := "policy:\n" + quotaWindowsYAML + "  quotas:\n" +
		fmt.Sprintf("    - {name: alice, principals: [\"User:%s\"], produce_bytes_per_second: %d}\n", saslUser, aliceQuota) +
		fmt.Sprintf("    - {name: bob, principals: [\"User:%s\"], produce_bytes_per_second: %d}\n", saslUser2, bobQuota)
	q.principals = startQuotaProxy(t, secureYAMLUsers(t, q.pki, q.upstream, "", users...)+principals)
	return q
}

// startQuotaProxy starts kproxy from yaml with its policy.quotas enforced.
func startQuotaProxy(t *testing.T, yaml string) *kproxytest.Kproxy {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(yaml))
	if err != nil {
		t.Fatalf("kproxy config: %v", err)
	}
	engine, err := quota.New(cfg.Policy, policy.QuotaMatcher, nil, nil)
	if err != nil {
		t.Fatalf("policy.quotas: %v", err)
	}
	if engine.Active() == 0 {
		t.Fatal("no quota rule in force")
	}
	return kproxytest.Start(t, yaml)
}

// checkBrokerWindows fails the calibration unless the brokers measure
// quotas over the windows kproxy's cells use.
func (q *quotaEnv) checkBrokerWindows(t *testing.T) {
	t.Helper()
	ctx, cancel := ctxTimeout(20 * time.Second)
	defer cancel()
	rcs, err := kadm.NewClient(q.upstreamClient(t)).DescribeBrokerConfigs(ctx, q.nodes...)
	if err != nil {
		t.Fatalf("describe broker configs: %v", err)
	}
	for _, rc := range rcs {
		if v := configValue(rc.Configs, "quota.window.num"); v != brokerQuotaWindows {
			t.Fatalf("broker %s measures quotas over quota.window.num=%s windows; the calibration needs %s, as kproxy's cells: start the cluster with KAFKA_SERVER_PROPS='quota.window.num=%s'", rc.Name, v, brokerQuotaWindows, brokerQuotaWindows)
		}
	}
}

// checkNoBrokerQuotas fails the test if the broker has byte-rate quotas
// of its own that could apply to the cells' clients: kproxy must be the
// throttler measured (a cluster reused after a calibration whose clean-up
// did not run would have them).
func (q *quotaEnv) checkNoBrokerQuotas(t *testing.T) {
	t.Helper()
	ids := map[string]bool{saslUser: true, saslUser2: true, "ANONYMOUS": true, quotaClientID(saslUser): true, quotaClientID(saslUser2): true}
	for _, cl := range quotaClients {
		ids[quotaClientID(cl)] = true
	}
	ctx, cancel := ctxTimeout(20 * time.Second)
	defer cancel()
	described, err := kadm.NewClient(q.upstreamClient(t)).DescribeClientQuotas(ctx, false, nil)
	if err != nil {
		t.Fatalf("describe the broker's client quotas: %v", err)
	}
	for _, d := range described {
		applies := true
		for _, c := range d.Entity {
			applies = applies && (c.Type == "user" || c.Type == "client-id") && (c.Name == nil || ids[*c.Name])
		}
		for _, v := range d.Values {
			if applies && (v.Key == "producer_byte_rate" || v.Key == "consumer_byte_rate") {
				t.Fatalf("the broker has its own quota %s %s for the quota cells' clients: remove it (kafka-configs --alter --delete-config) or use a fresh cluster", d.Entity, v)
			}
		}
	}
}

// upstreamClient is a franz-go client of the upstream itself, not kproxy,
// closed when the test ends.
func (q *quotaEnv) upstreamClient(t *testing.T) *kgo.Client {
	t.Helper()
	return testkit.Client(t, kgo.SeedBrokers(q.upstream...))
}

// setBrokerQuota sets the broker's own quotas for a client id (0: none),
// removed when the test ends.
func (q *quotaEnv) setBrokerQuota(t *testing.T, clientID string, produce, fetch float64) {
	t.Helper()
	adm := kadm.NewClient(q.upstreamClient(t))
	entity := []kadm.ClientQuotaEntityComponent{{Type: "client-id", Name: kmsg.StringPtr(clientID)}}
	alter := func(remove bool) error {
		var ops []kadm.AlterClientQuotaOp
		for key, v := range map[string]float64{"producer_byte_rate": produce, "consumer_byte_rate": fetch} {
			if v > 0 {
				ops = append(ops, kadm.AlterClientQuotaOp{Key: key, Value: v, Remove: remove})
			}
		}
		ctx, cancel := ctxTimeout(20 * time.Second)
		defer cancel()
		rs, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: entity, Ops: ops}})
		if err == nil && len(rs) == 1 && rs[0].Err != nil {
			err = rs[0].Err
		}
		return err
	}
	if err := alter(false); err != nil {
		t.Fatalf("set the broker's quota for client id %s: %v", clientID, err)
	}
	t.Cleanup(func() {
		if err := alter(true); err != nil {
			t.Errorf("remove the broker's quota for client id %s: %v", clientID, err)
		}
	})
}

// newQuotaTopic creates the cell's topic: 6 partitions, one replica each
// (replication is not what is measured, and costs the 2 cores CPU). When
// kproxy throttles, the partitions' leaders are spread over the brokers:
// kproxy's quota spans them. When the broker throttles (calibration), all
// are on one broker, since a broker's quota is its own.
func (q *quotaEnv) newQuotaTopic(t *testing.T, c *cellCtx) string {
	t.Helper()
	topic := name(c, "t")
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions, rt.ReplicationFactor = partitions, 1
	if q.brokerThrottles {
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		for p := int32(0); p < partitions; p++ {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = p, []int32{q.nodes[0]}
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		}
	}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := ctxTimeout(60 * time.Second)
	defer cancel()
	cl := q.kgoClient(t)
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
	}
	if err != nil {
		t.Fatalf("create topic %s through kproxy: %v", topic, err)
	}
	q.mu.Lock()
	q.topics = append(q.topics, topic)
	q.mu.Unlock()
	q.waitTopic(t, ctx, kadm.NewClient(cl), topic, partitions)
	q.waitTopicOnEveryBroker(t, ctx, topic, partitions)
	return topic
}

// quotaPayloads are record values of quotaRecordSize bytes that do not
// compress (clients are also told not to compress): Kafka's quotas count
// the bytes on the wire. Records share them; nothing writes to them.
func quotaPayloads() [][]byte {
	ps := make([][]byte, 16)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range ps {
		ps[i] = make([]byte, quotaRecordSize)
		for j := range ps[i] {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			ps[i][j] = byte(x)
		}
	}
	return ps
}

// quotaRunTimeout bounds one client's run under a quota.
const quotaRunTimeout = 120 * time.Second

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
