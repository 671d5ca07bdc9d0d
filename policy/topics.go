package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// This file holds the handlers of topic-partition APIs whose denials are
// per topic: the denied topics are removed from the request and answered
// with an error in each of their partitions.

func handleListOffsets(c *reqCtx, r *kmsg.ListOffsetsRequest) filter.Verdict {
	orig := r.Topics
	keys, denials, denied := c.topicDenials(len(orig),
		func(i int) (string, [16]byte) { return orig[i].Topic, [16]byte{} },
		func(name string) *denial { return c.check(OpDescribe, ResTopic, name) })
	if denied == 0 {
		return filter.Verdict{}
	}
	return c.split(r, denied == len(orig), func() { r.Topics = keepAllowed(orig, denials) }, func(resp kmsg.Response) error {
		lr, ok := resp.(*kmsg.ListOffsetsResponse)
		if !ok {
			return errWrongResponse(resp)
		}
		lr.Topics = mergeInOrder(lr.Topics, func(t *kmsg.ListOffsetsResponseTopic) topicKey { return topicKey{name: t.Topic} }, keys,
			func(i int) (kmsg.ListOffsetsResponseTopic, bool) {
				d, ok := denialAt(denials, i)
				if !ok {
					return kmsg.ListOffsetsResponseTopic{}, false
				}
				st := kmsg.NewListOffsetsResponseTopic()
				st.Topic = orig[i].Topic
				for _, p := range orig[i].Partitions {
					sp := kmsg.NewListOffsetsResponseTopicPartition()
					sp.Partition, sp.ErrorCode = p.Partition, d.code
					st.Partitions = append(st.Partitions, sp)
				}
				return st, true
			})
		return nil
	})
}

func handleDeleteRecords(c *reqCtx, r *kmsg.DeleteRecordsRequest) filter.Verdict {
	orig := r.Topics
	keys, denials, denied := c.topicDenials(len(orig),
		func(i int) (string, [16]byte) { return orig[i].Topic, [16]byte{} },
		func(name string) *denial { return c.check(OpDelete, ResTopic, name) })
	if denied == 0 {
		return filter.Verdict{}
	}
	return c.split(r, denied == len(orig), func() { r.Topics = keepAllowed(orig, denials) }, func(resp kmsg.Response) error {
		dr, ok := resp.(*kmsg.DeleteRecordsResponse)
		if !ok {
			return errWrongResponse(resp)
		}
		dr.Topics = mergeInOrder(dr.Topics, func(t *kmsg.DeleteRecordsResponseTopic) topicKey { return topicKey{name: t.Topic} }, keys,
			func(i int) (kmsg.DeleteRecordsResponseTopic, bool) {
				d, ok := denialAt(denials, i)
				if !ok {
					return kmsg.DeleteRecordsResponseTopic{}, false
				}
				st := kmsg.NewDeleteRecordsResponseTopic()
				st.Topic = orig[i].Topic
				for _, p := range orig[i].Partitions {
					sp := kmsg.NewDeleteRecordsResponseTopicPartition()
					sp.Partition, sp.LowWatermark, sp.ErrorCode = p.Partition, -1, d.code
					st.Partitions = append(st.Partitions, sp)
				}
				return st, true
			})
		return nil
	})
}

func handleOffsetForLeaderEpoch(c *reqCtx, r *kmsg.OffsetForLeaderEpochRequest) filter.Verdict {
	orig := r.Topics
	var keys []topicKey
	var denials []*denial
	var denied int
	if r.ReplicaID >= 0 {
		// A follower: ClusterAction decides for every topic.
		d := c.checkCluster(OpClusterAction)
		keys, denials, denied = c.topicDenials(len(orig),
			func(i int) (string, [16]byte) { return orig[i].Topic, [16]byte{} },
			func(string) *denial { return d })
	} else {
		keys, denials, denied = c.topicDenials(len(orig),
			func(i int) (string, [16]byte) { return orig[i].Topic, [16]byte{} },
			func(name string) *denial { return c.check(OpDescribe, ResTopic, name) })
	}
	if denied == 0 {
		return filter.Verdict{}
	}
	return c.split(r, denied == len(orig), func() { r.Topics = keepAllowed(orig, denials) }, func(resp kmsg.Response) error {
		or, ok := resp.(*kmsg.OffsetForLeaderEpochResponse)
		if !ok {
			return errWrongResponse(resp)
		}
		or.Topics = mergeInOrder(or.Topics, func(t *kmsg.OffsetForLeaderEpochResponseTopic) topicKey { return topicKey{name: t.Topic} }, keys,
			func(i int) (kmsg.OffsetForLeaderEpochResponseTopic, bool) {
				d, ok := denialAt(denials, i)
				if !ok {
					return kmsg.OffsetForLeaderEpochResponseTopic{}, false
				}
				st := kmsg.NewOffsetForLeaderEpochResponseTopic()
				st.Topic = orig[i].Topic
				for _, p := range orig[i].Partitions {
					sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
					sp.Partition, sp.ErrorCode = p.Partition, d.code
					st.Partitions = append(st.Partitions, sp)
				}
				return st, true
			})
		return nil
	})
}

func handleDescribeProducers(c *reqCtx, r *kmsg.DescribeProducersRequest) filter.Verdict {
	orig := r.Topics
	keys, denials, denied := c.topicDenials(len(orig),
		func(i int) (string, [16]byte) { return orig[i].Topic, [16]byte{} },
		func(name string) *denial { return c.check(OpRead, ResTopic, name) })
	if denied == 0 {
		return filter.Verdict{}
	}
	return c.split(r, denied == len(orig), func() { r.Topics = keepAllowed(orig, denials) }, func(resp kmsg.Response) error {
		dr, ok := resp.(*kmsg.DescribeProducersResponse)
		if !ok {
			return errWrongResponse(resp)
		}
		dr.Topics = mergeInOrder(dr.Topics, func(t *kmsg.DescribeProducersResponseTopic) topicKey { return topicKey{name: t.Topic} }, keys,
			func(i int) (kmsg.DescribeProducersResponseTopic, bool) {
				d, ok := denialAt(denials, i)
				if !ok {
					return kmsg.DescribeProducersResponseTopic{}, false
				}
				st := kmsg.NewDescribeProducersResponseTopic()
				st.Topic = orig[i].Topic
				for _, p := range orig[i].Partitions {
					sp := kmsg.NewDescribeProducersResponseTopicPartition()
					sp.Partition, sp.ErrorCode, sp.ErrorMessage = p, d.code, d.msgPtr()
					st.Partitions = append(st.Partitions, sp)
				}
				return st, true
			})
		return nil
	})
}
