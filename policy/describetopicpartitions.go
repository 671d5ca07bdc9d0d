package policy

import (
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// DescribeTopicPartitions (KIP-966) pages: the answer holds at most
// ResponsePartitionLimit partitions and a NextCursor (topic, partition)
// where the next page starts. Kafka removes the topics the principal may
// not describe before it pages, so a cursor never names one and the page
// size says nothing about them. kproxy sees only the upstream's pages,
// which are cut over every topic; it must cut its own.

// handleDescribeTopicPartitions enforces Describe on topics. Listed topics
// the principal may not describe are split off and answered with
// TOPIC_AUTHORIZATION_FAILED (as Kafka: only those at or after the cursor
// topic); an all-topics request is paged by kproxy over the describable
// topics only (see describeAllTopicPartitions).
func handleDescribeTopicPartitions(c *reqCtx, r *kmsg.DescribeTopicPartitionsRequest) filter.Verdict {
	if len(r.Topics) == 0 {
		return describeAllTopicPartitions(c, r)
	}
	orig := r.Topics
	keys := make([]string, len(orig))
	denials := make([]*denial, len(orig))
	denied := 0
	cursorDenied := false
	for i, t := range orig {
		keys[i] = t.Topic
		if denials[i] = c.check(OpDescribe, ResTopic, t.Topic); denials[i] != nil {
			denied++
			cursorDenied = cursorDenied || (r.Cursor != nil && t.Topic == r.Cursor.Topic)
		}
	}
	if denied == 0 {
		return filter.Verdict{OnResponse: filter.Then(func(dr *kmsg.DescribeTopicPartitionsResponse) error { c.learnDescribedTopics(dr); return nil })}
	}
	var cursorTopic string
	if r.Cursor != nil {
		cursorTopic = r.Cursor.Topic
	}
	// forward marks the topics the upstream must not see: the denied ones
	// and, when the cursor names a denied topic, every allowed one before
	// it. The upstream would refuse a cursor missing from the list, so the
	// cursor is dropped and the page starts at the first allowed topic
	// after it, which is where Kafka, having filtered the cursor topic out,
	// continues.
	forward := make([]*denial, len(orig))
	copy(forward, denials)
	before := &denial{code: errTopicAuthorizationFailed}
	forwarded := 0
	for i := range orig {
		if forward[i] == nil && cursorDenied && keys[i] < cursorTopic {
			forward[i] = before
		}
		if forward[i] == nil {
			forwarded++
		}
	}
	return c.split(r, forwarded == 0, func() {
		r.Topics = keepAllowed(orig, forward)
		if cursorDenied {
			r.Cursor = nil
		}
	}, filter.Then(func(dr *kmsg.DescribeTopicPartitionsResponse) error {
		c.learnDescribedTopics(dr)
		dr.Topics = mergeInOrder(dr.Topics, func(t *kmsg.DescribeTopicPartitionsResponseTopic) string { return deref(t.Topic) }, keys,
			func(i int) (kmsg.DescribeTopicPartitionsResponseTopic, bool) {
				d, ok := denialAt(denials, i)
				if !ok || keys[i] < cursorTopic {
					return kmsg.DescribeTopicPartitionsResponseTopic{}, false
				}
				st := kmsg.NewDescribeTopicPartitionsResponseTopic()
				name := keys[i]
				st.Topic, st.ErrorCode = &name, d.code
				return st, true
			})
		return nil
	}))
}

// describeAllTopicPartitions pages an all-topics request over the topics
// the principal may describe. kproxy asks the upstream for the largest
// page it serves (Kafka caps it at max.request.partition.size.limit,
// 2000 by default), drops the hidden topics, cuts the client's page from
// what is left and sets the cursor itself, so that it names a describable
// topic or nothing:
//   - more describable partitions in hand than the client's limit: the
//     cursor is the first one left out;
//   - the upstream's page ended in a describable topic: its cursor;
//   - it ended in a hidden topic: the cursor is just past the last
//     describable partition kproxy answered (the next request reads the
//     hidden run again, and the describable topics after it);
//   - the upstream's page held no describable partition at all (a run of
//     hidden partitions longer than the upstream page): no cursor, the
//     listing ends there. A cursor could only point into the hidden run.
//
// A client cursor naming a topic the principal may not describe is moved
// just past that topic, so the answer does not depend on whether it exists.
// In audit mode the request and answer pass unchanged.
func describeAllTopicPartitions(c *reqCtx, r *kmsg.DescribeTopicPartitionsRequest) filter.Verdict {
	if c.st.auditOnly {
		// Audit mode must not alter traffic: the answer is the upstream's,
		// and what would be hidden is only audited.
		return filter.Verdict{OnResponse: filter.Then(func(dr *kmsg.DescribeTopicPartitionsResponse) error {
			c.learnDescribedTopics(dr)
			for i := range dr.Topics {
				c.visible(OpDescribe, ResTopic, deref(dr.Topics[i].Topic))
			}
			return nil
		})}
	}
	limit := max(r.ResponsePartitionLimit, 1)
	var from *kmsg.DescribeTopicPartitionsRequestCursor // the cursor sent upstream
	if r.Cursor != nil {
		cur := *r.Cursor
		if !c.visible(OpDescribe, ResTopic, cur.Topic) {
			// The smallest name after cur.Topic and every name it prefixes:
			// no topic name holds a NUL byte.
			cur.Topic, cur.Partition = cur.Topic+"\x00", 0
		}
		from = &cur
		r.Cursor = from
	}
	r.ResponsePartitionLimit = math.MaxInt32
	return filter.Verdict{Modified: true, OnResponse: filter.Then(func(dr *kmsg.DescribeTopicPartitionsResponse) error {
		c.learnDescribedTopics(dr)
		pageDescribableTopics(c, dr, from, limit)
		return nil
	})}
}

// pageDescribableTopics cuts the client's page of at most limit partitions
// from dr, the upstream's answer starting at from, and sets its cursor; see
// describeAllTopicPartitions.
func pageDescribableTopics(c *reqCtx, dr *kmsg.DescribeTopicPartitionsResponse, from *kmsg.DescribeTopicPartitionsRequestCursor, limit int32) {
	upstreamNext := dr.NextCursor
	var next *kmsg.DescribeTopicPartitionsResponseNextCursor
	cursorAt := func(topic string, partition int32) {
		nc := kmsg.NewDescribeTopicPartitionsResponseNextCursor()
		nc.Topic, nc.Partition = topic, partition
		next = &nc
	}
	kept := make([]kmsg.DescribeTopicPartitionsResponseTopic, 0, len(dr.Topics))
	var emitted int32
	lastTopic, lastPartition := "", int32(-1) // the last describable partition answered
	for _, t := range dr.Topics {
		if t.Topic == nil || !c.visible(OpDescribe, ResTopic, *t.Topic) {
			continue
		}
		name := *t.Topic
		if len(t.Partitions) == 0 && t.ErrorCode == 0 && from != nil && name == from.Topic && from.Partition > 0 {
			// A cursor just past a topic's last partition (kproxy's own)
			// makes the upstream answer that topic again, empty.
			continue
		}
		if emitted >= limit {
			first := int32(0)
			if len(t.Partitions) > 0 {
				first = t.Partitions[0].Partition
			}
			cursorAt(name, first)
			break
		}
		if room := limit - emitted; int32(len(t.Partitions)) > room {
			cursorAt(name, t.Partitions[room].Partition)
			t.Partitions = t.Partitions[:room]
		}
		emitted += int32(len(t.Partitions))
		if n := len(t.Partitions); n > 0 {
			lastTopic, lastPartition = name, t.Partitions[n-1].Partition
		}
		kept = append(kept, t)
		if next != nil {
			break
		}
	}
	if next == nil && upstreamNext != nil {
		switch {
		case c.visible(OpDescribe, ResTopic, upstreamNext.Topic):
			next = upstreamNext
		case lastPartition >= 0:
			cursorAt(lastTopic, lastPartition+1)
		}
	}
	dr.Topics, dr.NextCursor = kept, next
}

// learnDescribedTopics records the topic ids of a DescribeTopicPartitions
// answer, before any are hidden.
func (c *reqCtx) learnDescribedTopics(dr *kmsg.DescribeTopicPartitionsResponse) {
	for _, t := range dr.Topics {
		if t.Topic != nil && t.ErrorCode == 0 {
			c.e.ids.learn(t.TopicID, *t.Topic)
		}
	}
}
