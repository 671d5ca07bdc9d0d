package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// This file holds the handlers of topic-partition APIs whose denials are
// per topic: the denied topics are removed from the request and answered
// with an error in each of their partitions (see topicSplit).

func handleListOffsets(c *reqCtx, r *kmsg.ListOffsetsRequest) filter.Verdict {
	return topicSplit[kmsg.ListOffsetsRequestTopic, kmsg.ListOffsetsResponseTopic, *kmsg.ListOffsetsResponse]{
		topics:     &r.Topics,
		key:        func(t *kmsg.ListOffsetsRequestTopic) topicKey { return byName(t.Topic) },
		respTopics: func(lr *kmsg.ListOffsetsResponse) *[]kmsg.ListOffsetsResponseTopic { return &lr.Topics },
		respKey:    func(t *kmsg.ListOffsetsResponseTopic) topicKey { return byName(t.Topic) },
		denied: func(t *kmsg.ListOffsetsRequestTopic, d *denial) kmsg.ListOffsetsResponseTopic {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = t.Topic
			for _, p := range t.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition, sp.ErrorCode = p.Partition, d.code
				st.Partitions = append(st.Partitions, sp)
			}
			return st
		},
	}.apply(c, r, func(name string) *denial { return c.check(OpDescribe, ResTopic, name) })
}

func handleDeleteRecords(c *reqCtx, r *kmsg.DeleteRecordsRequest) filter.Verdict {
	return topicSplit[kmsg.DeleteRecordsRequestTopic, kmsg.DeleteRecordsResponseTopic, *kmsg.DeleteRecordsResponse]{
		topics:     &r.Topics,
		key:        func(t *kmsg.DeleteRecordsRequestTopic) topicKey { return byName(t.Topic) },
		respTopics: func(dr *kmsg.DeleteRecordsResponse) *[]kmsg.DeleteRecordsResponseTopic { return &dr.Topics },
		respKey:    func(t *kmsg.DeleteRecordsResponseTopic) topicKey { return byName(t.Topic) },
		denied: func(t *kmsg.DeleteRecordsRequestTopic, d *denial) kmsg.DeleteRecordsResponseTopic {
			st := kmsg.NewDeleteRecordsResponseTopic()
			st.Topic = t.Topic
			for _, p := range t.Partitions {
				sp := kmsg.NewDeleteRecordsResponseTopicPartition()
				sp.Partition, sp.LowWatermark, sp.ErrorCode = p.Partition, -1, d.code
				st.Partitions = append(st.Partitions, sp)
			}
			return st
		},
	}.apply(c, r, func(name string) *denial { return c.check(OpDelete, ResTopic, name) })
}

func handleOffsetForLeaderEpoch(c *reqCtx, r *kmsg.OffsetForLeaderEpochRequest) filter.Verdict {
	var follower *denial
	if r.ReplicaID >= 0 {
		// A follower: ClusterAction decides for every topic.
		if follower = c.checkCluster(OpClusterAction); follower == nil {
			return filter.Verdict{}
		}
	}
	return topicSplit[kmsg.OffsetForLeaderEpochRequestTopic, kmsg.OffsetForLeaderEpochResponseTopic, *kmsg.OffsetForLeaderEpochResponse]{
		topics: &r.Topics,
		key:    func(t *kmsg.OffsetForLeaderEpochRequestTopic) topicKey { return byName(t.Topic) },
		respTopics: func(or *kmsg.OffsetForLeaderEpochResponse) *[]kmsg.OffsetForLeaderEpochResponseTopic {
			return &or.Topics
		},
		respKey: func(t *kmsg.OffsetForLeaderEpochResponseTopic) topicKey { return byName(t.Topic) },
		denied: func(t *kmsg.OffsetForLeaderEpochRequestTopic, d *denial) kmsg.OffsetForLeaderEpochResponseTopic {
			st := kmsg.NewOffsetForLeaderEpochResponseTopic()
			st.Topic = t.Topic
			for _, p := range t.Partitions {
				sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
				sp.Partition, sp.ErrorCode = p.Partition, d.code
				st.Partitions = append(st.Partitions, sp)
			}
			return st
		},
	}.applyWhole(c, r, follower, func(name string) *denial { return c.check(OpDescribe, ResTopic, name) })
}

func handleDescribeProducers(c *reqCtx, r *kmsg.DescribeProducersRequest) filter.Verdict {
	return topicSplit[kmsg.DescribeProducersRequestTopic, kmsg.DescribeProducersResponseTopic, *kmsg.DescribeProducersResponse]{
		topics:     &r.Topics,
		key:        func(t *kmsg.DescribeProducersRequestTopic) topicKey { return byName(t.Topic) },
		respTopics: func(dr *kmsg.DescribeProducersResponse) *[]kmsg.DescribeProducersResponseTopic { return &dr.Topics },
		respKey:    func(t *kmsg.DescribeProducersResponseTopic) topicKey { return byName(t.Topic) },
		denied: func(t *kmsg.DescribeProducersRequestTopic, d *denial) kmsg.DescribeProducersResponseTopic {
			st := kmsg.NewDescribeProducersResponseTopic()
			st.Topic = t.Topic
			for _, p := range t.Partitions {
				sp := kmsg.NewDescribeProducersResponseTopicPartition()
				sp.Partition, sp.ErrorCode, sp.ErrorMessage = p, d.code, d.msgPtr()
				st.Partitions = append(st.Partitions, sp)
			}
			return st
		},
	}.apply(c, r, func(name string) *denial { return c.check(OpRead, ResTopic, name) })
}
