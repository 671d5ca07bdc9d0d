package rewrite

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The builders below return responses whose every address field, at every
// version, holds an upstream address for nodes 1..3. Fields that do not exist
// at the version a test encodes at are dropped by the encoder, which is what
// the per-version expectations in addressCases account for.

var testNodes = []int32{1, 2, 3}

func strp(s string) *string { return &s }

// brokers is one E per test node, with kmsg's defaults and its NodeID,
// Host, Port and Rack (by kmsg's field names) at the upstream's address.
func brokers[E any]() []E {
	var out []E
	for _, n := range testNodes {
		e := defaulted[E]()
		v := reflect.ValueOf(&e).Elem()
		v.FieldByName("NodeID").SetInt(int64(n))
		v.FieldByName("Host").SetString(upstreamHost(n))
		v.FieldByName("Port").SetInt(int64(upstreamPort))
		v.FieldByName("Rack").Set(reflect.ValueOf(strp("rack-a")))
		out = append(out, e)
	}
	return out
}

// leaderMoved is a partition P answered NOT_LEADER_OR_FOLLOWER with its
// new leader (node 2, epoch 7): the reason a response carries brokers.
func leaderMoved[P any]() []P {
	p := defaulted[P]()
	v := reflect.ValueOf(&p).Elem()
	v.FieldByName("ErrorCode").SetInt(6)
	v.FieldByName("CurrentLeader").FieldByName("LeaderID").SetInt(2)
	v.FieldByName("CurrentLeader").FieldByName("LeaderEpoch").SetInt(7)
	return []P{p}
}

// defaulted is a T with kmsg's defaults.
func defaulted[T any]() T {
	var t T
	if d, ok := any(&t).(interface{ Default() }); ok {
		d.Default()
	}
	return t
}

func buildMetadata() kmsg.Response {
	r := kmsg.NewPtrMetadataResponse()
	r.ClusterID = strp("cluster-x")
	r.ControllerID = 1
	r.Brokers = brokers[kmsg.MetadataResponseBroker]()
	t := kmsg.NewMetadataResponseTopic()
	t.Topic = strp("orders")
	p := kmsg.NewMetadataResponseTopicPartition()
	p.Leader, p.Replicas, p.ISR = 2, []int32{1, 2, 3}, []int32{1, 2, 3}
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}

func buildFindCoordinator() kmsg.Response {
	r := kmsg.NewPtrFindCoordinatorResponse()
	// v0–v3 single answer.
	r.NodeID, r.Host, r.Port = 2, upstreamHost(2), upstreamPort
	// v4+ batched answers.
	for _, n := range testNodes {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Host, c.Port = "group-"+string(rune('a'+n)), n, upstreamHost(n), upstreamPort
		r.Coordinators = append(r.Coordinators, c)
	}
	return r
}

func buildDescribeCluster() kmsg.Response {
	r := kmsg.NewPtrDescribeClusterResponse()
	r.ClusterID, r.ControllerID = "cluster-x", 1
	r.Brokers = brokers[kmsg.DescribeClusterResponseBroker]()
	return r
}

func buildProduce() kmsg.Response {
	r := kmsg.NewPtrProduceResponse()
	t := kmsg.NewProduceResponseTopic()
	t.Topic, t.Partitions = "orders", leaderMoved[kmsg.ProduceResponseTopicPartition]()
	r.Topics, r.Brokers = append(r.Topics, t), brokers[kmsg.ProduceResponseBroker]()
	return r
}

func buildFetch() kmsg.Response {
	r := kmsg.NewPtrFetchResponse()
	t := kmsg.NewFetchResponseTopic()
	t.Topic, t.Partitions = "orders", leaderMoved[kmsg.FetchResponseTopicPartition]()
	r.Topics, r.Brokers = append(r.Topics, t), brokers[kmsg.FetchResponseBroker]()
	return r
}

func buildShareFetch() kmsg.Response {
	r := kmsg.NewPtrShareFetchResponse()
	t := kmsg.NewShareFetchResponseTopic()
	t.Partitions = leaderMoved[kmsg.ShareFetchResponseTopicPartition]()
	r.Topics, r.NodeEndpoints = append(r.Topics, t), brokers[kmsg.ShareFetchResponseNodeEndpoint]()
	return r
}

func buildShareAcknowledge() kmsg.Response {
	r := kmsg.NewPtrShareAcknowledgeResponse()
	t := kmsg.NewShareAcknowledgeResponseTopic()
	t.Partitions = leaderMoved[kmsg.ShareAcknowledgeResponseTopicPartition]()
	r.Topics, r.NodeEndpoints = append(r.Topics, t), brokers[kmsg.ShareAcknowledgeResponseNodeEndpoint]()
	return r
}

func buildDescribeQuorum() kmsg.Response {
	r := kmsg.NewPtrDescribeQuorumResponse()
	t := kmsg.NewDescribeQuorumResponseTopic()
	t.Topic = "__cluster_metadata"
	p := kmsg.NewDescribeQuorumResponseTopicPartition()
	p.LeaderID, p.LeaderEpoch, p.HighWatermark = 1, 4, 100
	for _, n := range testNodes {
		v := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		v.ReplicaID, v.LogEndOffset = n, 100
		p.CurrentVoters = append(p.CurrentVoters, v)
	}
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	for _, n := range testNodes {
		node := kmsg.NewDescribeQuorumResponseNode()
		node.NodeID = n
		l := kmsg.NewDescribeQuorumResponseNodeListener()
		l.Name, l.Host, l.Port = "CONTROLLER", upstreamHost(n), 9093
		node.Listeners = append(node.Listeners, l)
		r.Nodes = append(r.Nodes, node)
	}
	return r
}
