package conformance

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

func init() {
	register("confluent-kafka", "produce-consume", confluentProduceConsume)
	register("confluent-kafka", "resume", confluentResume)
	register("confluent-kafka", "kip848", confluentKIP848)
	register("confluent-kafka", "admin", confluentAdmin)
	register("confluent-kafka", "transactions", confluentTransactions)
	register("confluent-kafka", "addresses", confluentAddresses)
	register("confluent-kafka", "tls-scram", confluentTLSSCRAM)
	register("confluent-kafka", "sni", confluentTLSSCRAM)
}

const confluentScript = "clients/confluent_client.py"

var confluentCheck = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("python3", confluentScript, "version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	return string(out), nil
})

func requireConfluent(t *testing.T, c *cellCtx) {
	t.Helper()
	if _, err := confluentCheck(); err != nil {
		skipCell(t, c, "confluent-kafka for Python is not installed (pip install confluent-kafka)")
	}
}

// confluent runs the Python client with args against kproxy px (the
// secure one gets --security) and decodes its JSON output into out. Every
// connection librdkafka made must have gone to px.
func (e *env) confluent(t *testing.T, px *kproxytest.Kproxy, out any, args ...string) {
	t.Helper()
	e.confluentStdin(t, px, nil, out, args...)
}

// confluentStdin is confluent with stdin given to the script.
func (e *env) confluentStdin(t *testing.T, px *kproxytest.Kproxy, stdin []byte, out any, args ...string) {
	t.Helper()
	e.confluentWithin(t, 150*time.Second, px, stdin, out, args...)
}

// confluentWithin is confluentStdin killing the script after timeout.
func (e *env) confluentWithin(t *testing.T, timeout time.Duration, px *kproxytest.Kproxy, stdin []byte, out any, args ...string) {
	t.Helper()
	args = append([]string{confluentScript}, args...)
	args = append(args, "--bootstrap", e.seed(px), "--debug")
	if e.terminatesSASL(px) {
		args = append(args, "--security", e.pki.CAFile+":"+saslUser+":"+saslPass)
	}
	if px == e.oauth {
		args = append(args, "--oauth", e.pki.CAFile, e.idp.TokenURL(), oauthClientID, oauthSecret)
	}
	p := run(t, timeout, stdin, nil, "python3", args...)
	e.checkSockets(t, px, p)
	if err := json.Unmarshal([]byte(p.stdout.String()), out); err != nil {
		t.Fatalf("confluent_client.py output: %v\n%s", err, p.stdout.String())
	}
}

type confluentConsumed struct {
	Produced int `json:"produced"`
	Acked    int `json:"acked"`
	Consumed int `json:"consumed"`
	Records  []struct {
		P int32       `json:"p"`
		O int64       `json:"o"`
		K string      `json:"k"`
		V string      `json:"v"`
		H [][2]string `json:"h"`
	} `json:"records"`
}

func (c confluentConsumed) got() []got {
	gs := make([]got, len(c.Records))
	for i, r := range c.Records {
		gs[i] = got{r.P, r.O, r.K, r.V}
	}
	return gs
}

// confluentRoundTrip produces n records idempotently with acks=all and
// consumes them with group, in one run of the script.
func (e *env) confluentRoundTrip(t *testing.T, px *kproxytest.Kproxy, topic, group, protocol, prefix string, n int) {
	t.Helper()
	var out confluentConsumed
	e.confluent(t, px, &out, "roundtrip", "--topic", topic, "--group", group, "--group-protocol", protocol,
		"--records", strconv.Itoa(n), "--prefix", prefix)
	if out.Acked != n {
		t.Errorf("confluent-kafka: %d of %d records acked", out.Acked, n)
	}
	checkRecords(t, "confluent-kafka group ("+protocol+")", out.got(), makeRecs(prefix, n))
	e.checkCommitted(t, group, topic, int64(n))
}

func confluentProduceConsume(t *testing.T, c *cellCtx, e *env) {
	requireConfluent(t, c)
	topic := e.newTopic(t, c, "t", partitions)
	e.confluentRoundTrip(t, e.plain, topic, name(c, "g"), "classic", "confluent", goRecords)
}

func confluentResume(t *testing.T, c *cellCtx, e *env) {
	requireConfluent(t, c)
	topic := e.newTopic(t, c, "t", partitions)
	group := name(c, "g")
	e.confluentRoundTrip(t, e.plain, topic, group, "classic", "first", goRecords)
	var out confluentConsumed
	e.confluent(t, e.plain, &out, "produce", "--topic", topic, "--records", "300", "--prefix", "second")
	e.confluent(t, e.plain, &out, "consume", "--topic", topic, "--group", group, "--count", "300")
	checkRecords(t, "second run (from the commits)", out.got(), makeRecs("second", 300))
	e.checkCommitted(t, group, topic, int64(goRecords+300))
}

func confluentKIP848(t *testing.T, c *cellCtx, e *env) {
	requireConfluent(t, c)
	topic := e.newTopic(t, c, "t", partitions)
	group := name(c, "g")
	e.confluentRoundTrip(t, e.plain, topic, group, "consumer", "kip848", goRecords)
	// The group the broker knows is a KIP-848 "consumer" group.
	e.checkGroupType(t, group, "consumer")
}

func confluentAdmin(t *testing.T, c *cellCtx, e *env) {
	requireConfluent(t, c)
	var out struct {
		DescribePartitions int `json:"describe_partitions"`
		DescribeLeaders    []struct {
			ID   int32  `json:"id"`
			Host string `json:"host"`
			Port int    `json:"port"`
		} `json:"describe_leaders"`
		Retention   string `json:"retention.ms"`
		AfterAdd    int    `json:"partitions_after_add"`
		GroupListed bool   `json:"group_listed"`
		GroupState  string `json:"group_state"`
		Coordinator struct {
			ID   int32  `json:"id"`
			Host string `json:"host"`
			Port int    `json:"port"`
		} `json:"coordinator"`
		TopicDeleted bool `json:"topic_deleted"`
	}
	e.confluent(t, e.plain, &out, "admin", "--topic", name(c, "t"), "--group", name(c, "g"))
	if out.DescribePartitions != 3 || out.Retention != "3600000" || out.AfterAdd != 4 || !out.GroupListed || !out.TopicDeleted {
		t.Errorf("confluent-kafka admin saw %+v", out)
	}
	if out.GroupState != "ConsumerGroupState.EMPTY" {
		t.Errorf("group state %s, want EMPTY", out.GroupState)
	}
	for _, l := range out.DescribeLeaders {
		e.checkNodeAddr(t, e.plain, "describe_topics leader", l.ID, hostPort(l.Host, l.Port))
	}
	e.checkNodeAddr(t, e.plain, "describe_consumer_groups coordinator", out.Coordinator.ID, hostPort(out.Coordinator.Host, out.Coordinator.Port))
}

func confluentTransactions(t *testing.T, c *cellCtx, e *env) {
	requireConfluent(t, c)
	topic := e.newTopic(t, c, "t", 3)
	var b txnBatches
	for i, end := range []string{"commit", "abort", "commit"} {
		var out confluentConsumed
		e.confluent(t, e.plain, &out, "produce", "--topic", topic, "--records", "300", "--start", strconv.Itoa(i*300),
			"--prefix", end, "--transactional-id", name(c, "txn"), "--end", end)
		rs := makeRecsFrom(end, i*300, 300)
		if end == "commit" {
			b.committed = append(b.committed, rs...)
		} else {
			b.aborted = append(b.aborted, rs...)
		}
	}
	var out confluentConsumed
	e.confluent(t, e.plain, &out, "consume", "--topic", topic, "--group", name(c, "g"), "--count", strconv.Itoa(len(b.committed)), "--isolation", "read_committed")
	checkReadCommitted(t, "confluent-kafka read_committed", out.got(), b)
	e.checkTxnWritten(t, topic, b)
}

func confluentAddresses(t *testing.T, c *cellCtx, e *env) {
	requireConfluent(t, c)
	topic := e.newTopic(t, c, "t", partitions)
	group := name(c, "g")
	e.confluentRoundTrip(t, e.plain, topic, group, "classic", "addr", 200)
	type node struct {
		ID   int32  `json:"id"`
		Host string `json:"host"`
		Port int    `json:"port"`
	}
	var out struct {
		Brokers      []node `json:"brokers"`
		ClusterNodes []node `json:"cluster_nodes"`
		Controller   *node  `json:"controller"`
		Coordinator  node   `json:"coordinator"`
	}
	e.confluent(t, e.plain, &out, "metadata", "--topic", topic, "--group", group)
	if len(out.Brokers) != len(e.nodes) || len(out.ClusterNodes) != len(e.nodes) {
		t.Errorf("confluent-kafka sees %d brokers and %d cluster nodes, want %d", len(out.Brokers), len(out.ClusterNodes), len(e.nodes))
	}
	for _, b := range out.Brokers {
		e.checkNodeAddr(t, e.plain, "list_topics broker", b.ID, hostPort(b.Host, b.Port))
	}
	for _, b := range out.ClusterNodes {
		e.checkNodeAddr(t, e.plain, "describe_cluster node", b.ID, hostPort(b.Host, b.Port))
	}
	if out.Controller != nil {
		e.checkNodeAddr(t, e.plain, "describe_cluster controller", out.Controller.ID, hostPort(out.Controller.Host, out.Controller.Port))
	}
	e.checkNodeAddr(t, e.plain, "group coordinator", out.Coordinator.ID, hostPort(out.Coordinator.Host, out.Coordinator.Port))
}

func confluentTLSSCRAM(t *testing.T, c *cellCtx, e *env) {
	requireConfluent(t, c)
	topic := e.newTopic(t, c, "t", partitions)
	e.confluentRoundTrip(t, e.tlsProxy(c), topic, name(c, "g"), "classic", "tls", goRecords)
}
