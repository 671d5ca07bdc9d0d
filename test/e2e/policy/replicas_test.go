package e2epolicy

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

const replicaPolicy = `
policy:
  default: deny
  rules:
    - {name: everything, principals: ["*"], allow: [all], topics: ["*"], groups: ["*"], cluster: true}
`

// replicaYAML is the configuration of a kproxy with replicaPolicy in
// front of cluster.
func replicaYAML(cluster *kfake.Cluster) string {
	return testkit.Config{Upstream: cluster.ListenAddrs()[:1]}.YAML() + replicaPolicy
}

// TestReplicasResolveTopicIDs: two kproxy replicas with the same policy in
// front of one cluster. A client's Metadata goes through replica A, its
// Produce v13 and Fetch v13, which name the topic by id only, through
// replica B, which never relayed that id. B asks the cluster itself and
// serves them; a replica without the resolver (the behaviour before it)
// answers UNKNOWN_TOPIC_ID, which shows the id really was unknown there.
func TestReplicasResolveTopicIDs(t *testing.T) {
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "rep.t"))
	a, b, unaided := kproxytest.Start(t, replicaYAML(cluster)), kproxytest.Start(t, replicaYAML(cluster)), kproxytest.StartUnresolving(t, replicaYAML(cluster))

	raw := testkit.DialRaw(t, a.BootstrapAddr(), "replicas")
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("rep.t")}}
	mdResp := raw.MustRoundTrip(t, md).(*kmsg.MetadataResponse)
	if len(mdResp.Topics) != 1 || mdResp.Topics[0].ErrorCode != 0 {
		t.Fatalf("metadata through replica A: %+v", mdResp.Topics)
	}
	id := mdResp.Topics[0].TopicID
	leader := mdResp.Topics[0].Partitions[0].Leader

	produceByID := func(p brokerAddresser) int16 {
		addr, ok := p.BrokerAddr(leader)
		if !ok {
			t.Fatalf("replica has no listener for node %d", leader)
		}
		req := testkit.ProduceByID(13, -1, testkit.RecordBatch("by id"), id)
		resp := testkit.DialRaw(t, addr, "replicas").MustRoundTrip(t, req).(*kmsg.ProduceResponse)
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	fetchByID := func(p *kproxytest.Kproxy) (int16, int) {
		addr, _ := p.BrokerAddr(leader)
		resp := testkit.DialRaw(t, addr, "replicas").MustRoundTrip(t, rawFetchByID(id)).(*kmsg.FetchResponse)
		if len(resp.Topics) == 0 || len(resp.Topics[0].Partitions) == 0 {
			return resp.ErrorCode, 0
		}
		fp := resp.Topics[0].Partitions[0]
		return fp.ErrorCode, len(fp.RecordBatches)
	}

	if code := produceByID(unaided); code != 100 {
		t.Fatalf("control: a replica without the resolver answered Produce by id with %d, want UNKNOWN_TOPIC_ID (100): the id was not unknown there", code)
	}
	if code := produceByID(b); code != 0 {
		t.Fatalf("Produce v13 by id through replica B: error %d, want the record written", code)
	}
	if code, batches := fetchByID(b); code != 0 || batches == 0 {
		t.Fatalf("Fetch v13 by id through replica B: error %d, %d bytes of batches; want the record back", code, batches)
	}
	// A made-up id is still UNKNOWN_TOPIC_ID, from the cluster's answer.
	id[0] ^= 0xff
	if code := produceByID(b); code != 100 {
		t.Fatalf("Produce of an id the cluster does not know: %d, want UNKNOWN_TOPIC_ID (100)", code)
	}
}

// rawFetchByID is a v13 sessionless consumer fetch (topics by id only) of
// partition 0 of topic id from offset 0.
func rawFetchByID(id [16]byte) *kmsg.FetchRequest { return testkit.FetchByID(13, id) }

// brokerAddresser is a kproxy started either way.
type brokerAddresser interface {
	BrokerAddr(nodeID int32) (string, bool)
}
