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

// brokers is one E per test node (broker).
func brokers[E any]() []E {
	var out []E
	for _, n := range testNodes {
		out = append(out, broker(reflect.TypeFor[E](), n).Interface().(E))
	}
	return out
}

// broker is a typ with kmsg's defaults and its NodeID, Host, Port and Rack
// (by kmsg's field names) at node n's upstream address.
func broker(typ reflect.Type, n int32) reflect.Value {
	v := defaultedValue(typ)
	v.FieldByName("NodeID").SetInt(int64(n))
	v.FieldByName("Host").SetString(upstreamHost(n))
	v.FieldByName("Port").SetInt(int64(upstreamPort))
	v.FieldByName("Rack").Set(reflect.ValueOf(strp("rack-a")))
	return v
}

// leaderMovedPartition is a partition of type typ answered
// NOT_LEADER_OR_FOLLOWER with its new leader (node 2, epoch 7): the reason
// a response carries brokers.
func leaderMovedPartition(typ reflect.Type) reflect.Value {
	v := defaultedValue(typ)
	v.FieldByName("ErrorCode").SetInt(6)
	v.FieldByName("CurrentLeader").FieldByName("LeaderID").SetInt(2)
	v.FieldByName("CurrentLeader").FieldByName("LeaderEpoch").SetInt(7)
	return v
}

// defaultedValue is a typ with kmsg's defaults.
func defaultedValue(typ reflect.Type) reflect.Value {
	p := reflect.New(typ)
	if d, ok := p.Interface().(interface{ Default() }); ok {
		d.Default()
	}
	return p.Elem()
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
	return leaderMovedResponse(kmsg.NewPtrProduceResponse(), "Brokers")
}

func buildFetch() kmsg.Response { return leaderMovedResponse(kmsg.NewPtrFetchResponse(), "Brokers") }

func buildShareFetch() kmsg.Response {
	return leaderMovedResponse(kmsg.NewPtrShareFetchResponse(), "NodeEndpoints")
}

func buildShareAcknowledge() kmsg.Response {
	return leaderMovedResponse(kmsg.NewPtrShareAcknowledgeResponse(), "NodeEndpoints")
}

// leaderMovedResponse fills resp (a Produce, Fetch or share response) with
// one topic ("orders", where it has a name) whose one partition's leader
// moved (leaderMoved), and the test nodes in its endpoints field, as a
// broker answers NOT_LEADER_OR_FOLLOWER.
func leaderMovedResponse(resp kmsg.Response, endpoints string) kmsg.Response {
	v := reflect.ValueOf(resp).Elem()
	topics := v.FieldByName("Topics")
	topic := reflect.New(topics.Type().Elem())
	if d, ok := topic.Interface().(interface{ Default() }); ok {
		d.Default()
	}
	if name := topic.Elem().FieldByName("Topic"); name.IsValid() {
		name.SetString("orders")
	}
	parts := topic.Elem().FieldByName("Partitions")
	parts.Set(reflect.Append(parts, leaderMovedPartition(parts.Type().Elem())))
	topics.Set(reflect.Append(topics, topic.Elem()))
	eps := v.FieldByName(endpoints)
	for _, n := range testNodes {
		eps.Set(reflect.Append(eps, broker(eps.Type().Elem(), n)))
	}
	return resp
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
