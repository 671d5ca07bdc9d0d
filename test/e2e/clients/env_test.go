// Package e2eclients runs third-party Kafka clients (kcat/librdkafka,
// IBM/sarama, segmentio/kafka-go) through kproxy against a kfake cluster.
// Each test checks that the client only ever learns kproxy's addresses and
// that every record it produces comes back through kproxy intact.
package e2eclients

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

const (
	numBrokers    = 3
	numPartitions = 6
)

// env is a 3-broker kfake cluster behind a kproxy.
type env struct {
	t       *testing.T
	cluster *kfake.Cluster
	proxy   *testkit.Proxy
}

func newEnv(t *testing.T) *env {
	t.Helper()
	c := testkit.Cluster(t, numBrokers)
	p := testkit.StartProxy(t, c.ListenAddrs(), "")
	return &env{t: t, cluster: c, proxy: p}
}

// bootstrap is kproxy's bootstrap address.
func (e *env) bootstrap() string { return e.proxy.BootstrapAddr() }

// proxyBrokerAddrs is what kproxy advertises for each kfake node.
func (e *env) proxyBrokerAddrs() []string {
	e.t.Helper()
	var addrs []string
	for id := int32(0); id < numBrokers; id++ {
		a, ok := e.proxy.BrokerAddr(id)
		if !ok {
			e.t.Fatalf("kproxy has no address for node %d", id)
		}
		addrs = append(addrs, a)
	}
	return addrs
}

// checkProxyAddr fails the test unless addr is one of kproxy's broker
// addresses (or, if bootstrapOK, its bootstrap address), and in particular
// never a kfake address.
func (e *env) checkProxyAddr(what, addr string, bootstrapOK bool) {
	e.t.Helper()
	if slices.Contains(e.cluster.ListenAddrs(), addr) {
		e.t.Errorf("%s: client was told the upstream (kfake) address %s", what, addr)
		return
	}
	if bootstrapOK && addr == e.bootstrap() {
		return
	}
	if !slices.Contains(e.proxyBrokerAddrs(), addr) {
		e.t.Errorf("%s: address %s is not a kproxy broker address %v", what, addr, e.proxyBrokerAddrs())
	}
}

// createTopic creates topic with numPartitions partitions through kproxy
// with kadm, and waits until kproxy reports metadata for every partition.
func (e *env) createTopic(topic string) {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.bootstrap()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, numPartitions, -1, nil, topic)
	if err != nil || resp.Err != nil {
		e.t.Fatalf("create topic %s through kproxy: %v / %v", topic, err, resp.Err)
	}
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil && len(td.Partitions) == numPartitions {
				for _, b := range md.Brokers {
					e.checkProxyAddr("kadm metadata", net.JoinHostPort(b.Host, fmt.Sprint(b.Port)), false)
				}
				return
			}
		}
		select {
		case <-ctx.Done():
			e.t.Fatalf("topic %s never showed %d partitions: %v", topic, numPartitions, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// record is one keyed record as produced.
type record struct{ key, value string }

func makeRecords(prefix string, n int) []record {
	rs := make([]record, n)
	for i := range rs {
		rs[i] = record{key: fmt.Sprintf("%s-key-%04d", prefix, i), value: fmt.Sprintf("%s-value-%04d", prefix, i)}
	}
	return rs
}

// checkSameRecords fails unless got holds exactly want, each once, in any
// order.
func checkSameRecords(t *testing.T, what string, got, want []record) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %d records, want %d", what, len(got), len(want))
	}
	seen := make(map[record]int, len(got))
	for _, r := range got {
		seen[r]++
	}
	missing, dup := 0, 0
	for _, r := range want {
		switch seen[r] {
		case 0:
			if missing++; missing <= 3 {
				t.Errorf("%s: missing %+v", what, r)
			}
		case 1:
		default:
			if dup++; dup <= 3 {
				t.Errorf("%s: %+v seen %d times", what, r, seen[r])
			}
		}
		delete(seen, r)
	}
	for r := range seen {
		t.Errorf("%s: unexpected record %+v", what, r)
		break
	}
	if missing+dup > 0 {
		t.Errorf("%s: %d missing, %d duplicated", what, missing, dup)
	}
}

// checkCommitted fails unless group has committed offsets for every
// partition of topic that add up to total (every record consumed, with one
// offset per record).
func (e *env) checkCommitted(group, topic string, total int64) {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.bootstrap()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	offsets, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err != nil {
		e.t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	var sum int64
	n := 0
	offsets.Each(func(o kadm.OffsetResponse) {
		if o.Topic != topic {
			return
		}
		if o.Err != nil {
			e.t.Errorf("group %s partition %d: %v", group, o.Partition, o.Err)
		}
		n++
		sum += o.At
	})
	if sum != total {
		e.t.Errorf("group %s committed offsets over %d partitions of %s add up to %d, want %d", group, n, topic, sum, total)
	}
}
