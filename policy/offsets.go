package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// handleOffsetCommit enforces Read on the group (every partition fails
// without it) and Read on each topic (denied topics are split off).
func handleOffsetCommit(c *reqCtx, r *kmsg.OffsetCommitRequest) filter.Verdict {
	orig := r.Topics
	var keys []topicKey
	var denials []*denial
	var denied int
	if gd := c.check(OpRead, ResGroup, r.Group); gd != nil {
		keys, denials, denied = c.topicDenials(len(orig),
			func(i int) (string, [16]byte) { return orig[i].Topic, orig[i].TopicID },
			func(string) *denial { return gd })
	} else {
		keys, denials, denied = c.topicDenials(len(orig),
			func(i int) (string, [16]byte) { return orig[i].Topic, orig[i].TopicID },
			func(name string) *denial { return c.check(OpRead, ResTopic, name) })
	}
	if denied == 0 {
		return filter.Verdict{}
	}
	return c.split(r, denied == len(orig), func() { r.Topics = keepAllowed(orig, denials) }, func(resp kmsg.Response) error {
		or, ok := resp.(*kmsg.OffsetCommitResponse)
		if !ok {
			return errWrongResponse(resp)
		}
		or.Topics = mergeInOrder(or.Topics, func(t *kmsg.OffsetCommitResponseTopic) topicKey { return topicKey{t.Topic, t.TopicID} }, keys,
			func(i int) (kmsg.OffsetCommitResponseTopic, bool) {
				d, ok := denialAt(denials, i)
				if !ok {
					return kmsg.OffsetCommitResponseTopic{}, false
				}
				st := kmsg.NewOffsetCommitResponseTopic()
				st.Topic, st.TopicID = orig[i].Topic, orig[i].TopicID
				for _, p := range orig[i].Partitions {
					sp := kmsg.NewOffsetCommitResponseTopicPartition()
					sp.Partition, sp.ErrorCode = p.Partition, d.code
					st.Partitions = append(st.Partitions, sp)
				}
				return st, true
			})
		return nil
	})
}

// handleTxnOffsetCommit enforces Write on the transactional id and Read on
// the group (every partition fails without them) and Read on each topic
// (denied topics are split off).
func handleTxnOffsetCommit(c *reqCtx, r *kmsg.TxnOffsetCommitRequest) filter.Verdict {
	orig := r.Topics
	whole := c.check(OpWrite, ResTransactionalID, r.TransactionalID)
	if whole == nil {
		whole = c.check(OpRead, ResGroup, r.Group)
	}
	keys, denials, denied := c.topicDenials(len(orig),
		func(i int) (string, [16]byte) { return orig[i].Topic, orig[i].TopicID },
		func(name string) *denial {
			if whole != nil {
				return whole
			}
			return c.check(OpRead, ResTopic, name)
		})
	if denied == 0 {
		return filter.Verdict{}
	}
	return c.split(r, denied == len(orig), func() { r.Topics = keepAllowed(orig, denials) }, func(resp kmsg.Response) error {
		tr, ok := resp.(*kmsg.TxnOffsetCommitResponse)
		if !ok {
			return errWrongResponse(resp)
		}
		tr.Topics = mergeInOrder(tr.Topics, func(t *kmsg.TxnOffsetCommitResponseTopic) topicKey { return topicKey{t.Topic, t.TopicID} }, keys,
			func(i int) (kmsg.TxnOffsetCommitResponseTopic, bool) {
				d, ok := denialAt(denials, i)
				if !ok {
					return kmsg.TxnOffsetCommitResponseTopic{}, false
				}
				st := kmsg.NewTxnOffsetCommitResponseTopic()
				st.Topic, st.TopicID = orig[i].Topic, orig[i].TopicID
				for _, p := range orig[i].Partitions {
					sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
					sp.Partition, sp.ErrorCode = p.Partition, d.code
					st.Partitions = append(st.Partitions, sp)
				}
				return st, true
			})
		return nil
	})
}

// handleOffsetDelete enforces Delete on the group (top-level error) and
// Read on each topic (denied topics are split off).
func handleOffsetDelete(c *reqCtx, r *kmsg.OffsetDeleteRequest) filter.Verdict {
	if d := c.check(OpDelete, ResGroup, r.Group); d != nil {
		return denyTopLevel(r, d)
	}
	orig := r.Topics
	keys, denials, denied := c.topicDenials(len(orig),
		func(i int) (string, [16]byte) { return orig[i].Topic, [16]byte{} },
		func(name string) *denial { return c.check(OpRead, ResTopic, name) })
	if denied == 0 {
		return filter.Verdict{}
	}
	return c.split(r, denied == len(orig), func() { r.Topics = keepAllowed(orig, denials) }, func(resp kmsg.Response) error {
		or, ok := resp.(*kmsg.OffsetDeleteResponse)
		if !ok {
			return errWrongResponse(resp)
		}
		or.Topics = mergeInOrder(or.Topics, func(t *kmsg.OffsetDeleteResponseTopic) topicKey { return topicKey{name: t.Topic} }, keys,
			func(i int) (kmsg.OffsetDeleteResponseTopic, bool) {
				d, ok := denialAt(denials, i)
				if !ok {
					return kmsg.OffsetDeleteResponseTopic{}, false
				}
				st := kmsg.NewOffsetDeleteResponseTopic()
				st.Topic = orig[i].Topic
				for _, p := range orig[i].Partitions {
					sp := kmsg.NewOffsetDeleteResponseTopicPartition()
					sp.Partition, sp.ErrorCode = p.Partition, d.code
					st.Partitions = append(st.Partitions, sp)
				}
				return st, true
			})
		return nil
	})
}
