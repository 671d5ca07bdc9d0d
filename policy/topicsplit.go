package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// topicSplit is the shape shared by the APIs whose request lists topics
// (T), each with partitions, and whose response answers topic by topic
// (RT) with an error per partition: ListOffsets, DeleteRecords,
// OffsetForLeaderEpoch, DescribeProducers, OffsetCommit, TxnOffsetCommit,
// OffsetDelete and unbatched OffsetFetch. Denied topics are removed from
// the request and answered by the policy, in the client's order; a request
// whose every topic is denied never reaches the upstream.
type topicSplit[T, RT any, Resp kmsg.Response] struct {
	topics *[]T              // the request's topic list
	key    func(*T) topicKey // a request topic's name or id
	// respTopics is the response's topic list.
	respTopics func(resp Resp) *[]RT
	respKey    func(*RT) topicKey
	// denied is the policy's answer for a denied request topic.
	denied func(*T, *denial) RT
}

// apply decides each topic with check (topic ids kproxy cannot name are
// denied with UNKNOWN_TOPIC_ID) and returns the verdict for req.
func (s topicSplit[T, RT, Resp]) apply(c *reqCtx, req kmsg.Request, check func(name string) *denial) filter.Verdict {
	orig := *s.topics
	keys, denials, denied := c.topicDenials(len(orig), func(i int) (string, [16]byte) {
		k := s.key(&orig[i])
		return k.name, k.id
	}, check)
	if denied == 0 {
		return filter.Verdict{}
	}
	return s.verdict(c, req, orig, keys, denials, denied == len(orig))
}

// applyWhole is apply for a request that a denial of its own (of its group
// or transactional id) refuses as a whole. Kafka's authorizer decides that
// before it resolves any topic id, so with whole set every topic is
// answered with it and no id is looked up: the answer is then the same
// whether an id names a topic or nothing. Such a request never reaches the
// cluster, even when it lists no topic.
func (s topicSplit[T, RT, Resp]) applyWhole(c *reqCtx, req kmsg.Request, whole *denial, check func(name string) *denial) filter.Verdict {
	if whole == nil {
		return s.apply(c, req, check)
	}
	orig := *s.topics
	keys, denials := make([]topicKey, len(orig)), make([]*denial, len(orig))
	for i := range orig {
		keys[i], denials[i] = s.key(&orig[i]), whole
	}
	return s.verdict(c, req, orig, keys, denials, true)
}

// verdict answers the denied topics (denials[i] set) in the client's order
// and forwards the others, or answers req whole when allDenied.
func (s topicSplit[T, RT, Resp]) verdict(c *reqCtx, req kmsg.Request, orig []T, keys []topicKey, denials []*denial, allDenied bool) filter.Verdict {
	strip := func() { *s.topics = keepAllowed(orig, denials) }
	return c.split(req, allDenied, strip, filter.Then(func(resp Resp) error {
		list := s.respTopics(resp)
		*list = mergeInOrder(*list, s.respKey, keys, func(i int) (RT, bool) {
			d, ok := denialAt(denials, i)
			if !ok {
				var none RT
				return none, false
			}
			return s.denied(&orig[i], d), true
		})
		return nil
	}))
}

// byName is the key of a topic named only by name.
func byName(name string) topicKey { return topicKey{name: name} }
