package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// handleOffsetCommit enforces Read on the group (every partition fails
// without it) and Read on each topic (denied topics are split off).
func handleOffsetCommit(c *reqCtx, r *kmsg.OffsetCommitRequest) filter.Verdict {
	return splitTopics(c, r, topicListing(&r.Topics, func(t *kmsg.OffsetCommitRequestTopic) topicKey { return topicKey{t.Topic, t.TopicID} },
		func(resp *kmsg.OffsetCommitResponse) *[]kmsg.OffsetCommitResponseTopic { return &resp.Topics }),
		c.check(OpRead, ResGroup, r.Group), c.topicCheck(OpRead))
}

// handleTxnOffsetCommit enforces Write on the transactional id and Read on
// the group (every partition fails without them) and Read on each topic
// (denied topics are split off).
func handleTxnOffsetCommit(c *reqCtx, r *kmsg.TxnOffsetCommitRequest) filter.Verdict {
	whole := c.check(OpWrite, ResTransactionalID, r.TransactionalID)
	if whole == nil {
		whole = c.check(OpRead, ResGroup, r.Group)
	}
	return splitTopics(c, r, topicListing(&r.Topics, func(t *kmsg.TxnOffsetCommitRequestTopic) topicKey { return topicKey{t.Topic, t.TopicID} },
		func(resp *kmsg.TxnOffsetCommitResponse) *[]kmsg.TxnOffsetCommitResponseTopic { return &resp.Topics }),
		whole, c.topicCheck(OpRead))
}

// handleOffsetDelete enforces Delete on the group (top-level error) and
// Read on each topic (denied topics are split off).
func handleOffsetDelete(c *reqCtx, r *kmsg.OffsetDeleteRequest) filter.Verdict {
	if d := c.check(OpDelete, ResGroup, r.Group); d != nil {
		return denyTopLevel(r, d)
	}
	return splitTopics(c, r, topicListing(&r.Topics, func(t *kmsg.OffsetDeleteRequestTopic) topicKey { return byName(t.Topic) },
		func(resp *kmsg.OffsetDeleteResponse) *[]kmsg.OffsetDeleteResponseTopic { return &resp.Topics }),
		nil, c.topicCheck(OpRead))
}
