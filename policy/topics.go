package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// This file holds the handlers of topic-partition APIs whose denials are
// per topic: the denied topics are removed from the request and answered
// with an error in each of their partitions (see splitTopics).

func handleListOffsets(c *reqCtx, r *kmsg.ListOffsetsRequest) filter.Verdict {
	return splitTopics(c, r, topicListing(&r.Topics, func(t *kmsg.ListOffsetsRequestTopic) topicKey { return byName(t.Topic) },
		func(resp *kmsg.ListOffsetsResponse) *[]kmsg.ListOffsetsResponseTopic { return &resp.Topics }), nil, c.topicCheck(OpDescribe))
}

func handleDeleteRecords(c *reqCtx, r *kmsg.DeleteRecordsRequest) filter.Verdict {
	return splitTopics(c, r, topicListing(&r.Topics, func(t *kmsg.DeleteRecordsRequestTopic) topicKey { return byName(t.Topic) },
		func(resp *kmsg.DeleteRecordsResponse) *[]kmsg.DeleteRecordsResponseTopic { return &resp.Topics }), nil, c.topicCheck(OpDelete))
}

func handleOffsetForLeaderEpoch(c *reqCtx, r *kmsg.OffsetForLeaderEpochRequest) filter.Verdict {
	var follower *denial
	if r.ReplicaID >= 0 {
		// A follower: ClusterAction decides for every topic.
		if follower = c.checkCluster(OpClusterAction); follower == nil {
			return filter.Verdict{}
		}
	}
	return splitTopics(c, r, topicListing(&r.Topics, func(t *kmsg.OffsetForLeaderEpochRequestTopic) topicKey { return byName(t.Topic) },
		func(resp *kmsg.OffsetForLeaderEpochResponse) *[]kmsg.OffsetForLeaderEpochResponseTopic {
			return &resp.Topics
		}), follower, c.topicCheck(OpDescribe))
}

func handleDescribeProducers(c *reqCtx, r *kmsg.DescribeProducersRequest) filter.Verdict {
	return splitTopics(c, r, topicListing(&r.Topics, func(t *kmsg.DescribeProducersRequestTopic) topicKey { return byName(t.Topic) },
		func(resp *kmsg.DescribeProducersResponse) *[]kmsg.DescribeProducersResponseTopic { return &resp.Topics }), nil, c.topicCheck(OpRead))
}
