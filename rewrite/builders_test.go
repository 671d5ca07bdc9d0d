package rewrite

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The builders below return responses whose every address field, at every
// version, holds an upstream address for nodes 1..3. Fields that do not exist
// at the version a test encodes at are dropped by the encoder, which is what
// the per-version expectations in addressCases account for.

var testNodes = []int32{1, 2, 3}

func strp(s string) *string { return &s }

func buildMetadata() kmsg.Response {
	r := kmsg.NewPtrMetadataResponse()
	r.ClusterID = strp("cluster-x")
	r.ControllerID = 1
	for _, n := range testNodes {
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port, b.Rack = n, upstreamHost(n), upstreamPort, strp("rack-a")
		r.Brokers = append(r.Brokers, b)
	}
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
	for _, n := range testNodes {
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.Host, b.Port, b.Rack = n, upstreamHost(n), upstreamPort, strp("rack-a")
		r.Brokers = append(r.Brokers, b)
	}
	return r
}

func buildProduce() kmsg.Response {
	r := kmsg.NewPtrProduceResponse()
	t := kmsg.NewProduceResponseTopic()
	t.Topic = "orders"
	p := kmsg.NewProduceResponseTopicPartition()
	p.ErrorCode = 6 // NOT_LEADER_OR_FOLLOWER, the reason Brokers is sent
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 2, 7
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	for _, n := range testNodes {
		b := kmsg.NewProduceResponseBroker()
		b.NodeID, b.Host, b.Port, b.Rack = n, upstreamHost(n), upstreamPort, strp("rack-a")
		r.Brokers = append(r.Brokers, b)
	}
	return r
}

func buildFetch() kmsg.Response {
	r := kmsg.NewPtrFetchResponse()
	t := kmsg.NewFetchResponseTopic()
	t.Topic = "orders"
	p := kmsg.NewFetchResponseTopicPartition()
	p.ErrorCode = 6
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 2, 7
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	for _, n := range testNodes {
		b := kmsg.NewFetchResponseBroker()
		b.NodeID, b.Host, b.Port, b.Rack = n, upstreamHost(n), upstreamPort, strp("rack-a")
		r.Brokers = append(r.Brokers, b)
	}
	return r
}

func buildShareFetch() kmsg.Response {
	r := kmsg.NewPtrShareFetchResponse()
	t := kmsg.NewShareFetchResponseTopic()
	p := kmsg.NewShareFetchResponseTopicPartition()
	p.ErrorCode = 6
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 2, 7
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	for _, n := range testNodes {
		e := kmsg.NewShareFetchResponseNodeEndpoint()
		e.NodeID, e.Host, e.Port, e.Rack = n, upstreamHost(n), upstreamPort, strp("rack-a")
		r.NodeEndpoints = append(r.NodeEndpoints, e)
	}
	return r
}

func buildShareAcknowledge() kmsg.Response {
	r := kmsg.NewPtrShareAcknowledgeResponse()
	t := kmsg.NewShareAcknowledgeResponseTopic()
	p := kmsg.NewShareAcknowledgeResponseTopicPartition()
	p.ErrorCode = 6
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 2, 7
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	for _, n := range testNodes {
		e := kmsg.NewShareAcknowledgeResponseNodeEndpoint()
		e.NodeID, e.Host, e.Port, e.Rack = n, upstreamHost(n), upstreamPort, strp("rack-a")
		r.NodeEndpoints = append(r.NodeEndpoints, e)
	}
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
