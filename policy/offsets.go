package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// handleOffsetCommit enforces Read on the group (every partition fails
// without it) and Read on each topic (denied topics are split off).
func handleOffsetCommit(c *reqCtx, r *kmsg.OffsetCommitRequest) filter.Verdict {
	return topicSplit[kmsg.OffsetCommitRequestTopic, kmsg.OffsetCommitResponseTopic, *kmsg.OffsetCommitResponse]{
		topics:     &r.Topics,
		key:        func(t *kmsg.OffsetCommitRequestTopic) topicKey { return topicKey{t.Topic, t.TopicID} },
		respTopics: func(or *kmsg.OffsetCommitResponse) *[]kmsg.OffsetCommitResponseTopic { return &or.Topics },
		respKey:    func(t *kmsg.OffsetCommitResponseTopic) topicKey { return topicKey{t.Topic, t.TopicID} },
		denied: func(t *kmsg.OffsetCommitRequestTopic, d *denial) kmsg.OffsetCommitResponseTopic {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic, st.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition, sp.ErrorCode = p.Partition, d.code
				st.Partitions = append(st.Partitions, sp)
			}
			return st
		},
	}.applyWhole(c, r, c.check(OpRead, ResGroup, r.Group), func(name string) *denial { return c.check(OpRead, ResTopic, name) })
}

// handleTxnOffsetCommit enforces Write on the transactional id and Read on
// the group (every partition fails without them) and Read on each topic
// (denied topics are split off).
func handleTxnOffsetCommit(c *reqCtx, r *kmsg.TxnOffsetCommitRequest) filter.Verdict {
	whole := c.check(OpWrite, ResTransactionalID, r.TransactionalID)
	if whole == nil {
		whole = c.check(OpRead, ResGroup, r.Group)
	}
	return topicSplit[kmsg.TxnOffsetCommitRequestTopic, kmsg.TxnOffsetCommitResponseTopic, *kmsg.TxnOffsetCommitResponse]{
		topics:     &r.Topics,
		key:        func(t *kmsg.TxnOffsetCommitRequestTopic) topicKey { return topicKey{t.Topic, t.TopicID} },
		respTopics: func(tr *kmsg.TxnOffsetCommitResponse) *[]kmsg.TxnOffsetCommitResponseTopic { return &tr.Topics },
		respKey:    func(t *kmsg.TxnOffsetCommitResponseTopic) topicKey { return topicKey{t.Topic, t.TopicID} },
		denied: func(t *kmsg.TxnOffsetCommitRequestTopic, d *denial) kmsg.TxnOffsetCommitResponseTopic {
			st := kmsg.NewTxnOffsetCommitResponseTopic()
			st.Topic, st.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				sp.Partition, sp.ErrorCode = p.Partition, d.code
				st.Partitions = append(st.Partitions, sp)
			}
			return st
		},
	}.applyWhole(c, r, whole, func(name string) *denial { return c.check(OpRead, ResTopic, name) })
}

// handleOffsetDelete enforces Delete on the group (top-level error) and
// Read on each topic (denied topics are split off).
func handleOffsetDelete(c *reqCtx, r *kmsg.OffsetDeleteRequest) filter.Verdict {
	if d := c.check(OpDelete, ResGroup, r.Group); d != nil {
		return denyTopLevel(r, d)
	}
	return topicSplit[kmsg.OffsetDeleteRequestTopic, kmsg.OffsetDeleteResponseTopic, *kmsg.OffsetDeleteResponse]{
		topics:     &r.Topics,
		key:        func(t *kmsg.OffsetDeleteRequestTopic) topicKey { return byName(t.Topic) },
		respTopics: func(or *kmsg.OffsetDeleteResponse) *[]kmsg.OffsetDeleteResponseTopic { return &or.Topics },
		respKey:    func(t *kmsg.OffsetDeleteResponseTopic) topicKey { return byName(t.Topic) },
		denied: func(t *kmsg.OffsetDeleteRequestTopic, d *denial) kmsg.OffsetDeleteResponseTopic {
			st := kmsg.NewOffsetDeleteResponseTopic()
			st.Topic = t.Topic
			for _, p := range t.Partitions {
				sp := kmsg.NewOffsetDeleteResponseTopicPartition()
				sp.Partition, sp.ErrorCode = p.Partition, d.code
				st.Partitions = append(st.Partitions, sp)
			}
			return st
		},
	}.apply(c, r, func(name string) *denial { return c.check(OpRead, ResTopic, name) })
}
