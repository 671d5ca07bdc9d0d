package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// handleFetch enforces Read on each fetched topic, or ClusterAction for a
// follower's fetch. A consumer fetch is carried without a fetch session
// (fetch_session.go), so the topics it lists are all it can fetch, and
// each is decided here. Forgotten topics are passed on: forgetting needs
// no permission, and a sessionless fetch has nothing to forget.
func handleFetch(c *reqCtx, r *kmsg.FetchRequest) filter.Verdict {
	if r.ReplicaID >= 0 || r.ReplicaState.ID >= 0 {
		// ClusterAction may read every partition: a follower's session
		// hides nothing it could not name.
		if d := c.checkCluster(OpClusterAction); d != nil {
			return fetchDeny(r, func(int) *denial { return d })
		}
		return filter.Verdict{}
	}
	if namesFetchSession(r) {
		return refuseFetchSession(c, r)
	}
	modified := makeSessionless(r)
	orig := r.Topics
	keys, denials, denied := c.topicDenials(len(orig),
		func(i int) (string, [16]byte) { return orig[i].Topic, orig[i].TopicID },
		func(name string) *denial { return c.check(OpRead, ResTopic, name) })
	if denied == 0 {
		return filter.Verdict{Modified: modified}
	}
	if denied == len(orig) {
		return fetchDeny(r, func(i int) *denial { return denials[i] })
	}
	return c.split(r, false, func() { r.Topics = keepAllowed(orig, denials) }, filter.Then(func(fr *kmsg.FetchResponse) error {
		fr.Topics = mergeInOrder(fr.Topics, func(t *kmsg.FetchResponseTopic) topicKey { return topicKey{t.Topic, t.TopicID} }, keys,
			func(i int) (kmsg.FetchResponseTopic, bool) {
				d, ok := denialAt(denials, i)
				if !ok {
					return kmsg.FetchResponseTopic{}, false
				}
				return fetchErrTopic(&orig[i], d), true
			})
		return nil
	}))
}

// fetchDeny answers a wholly denied fetch. The answer opens no fetch
// session (session id 0), so the client's next fetch is a full one.
func fetchDeny(r *kmsg.FetchRequest, denialOf func(i int) *denial) filter.Verdict {
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	for i := range r.Topics {
		resp.Topics = append(resp.Topics, fetchErrTopic(&r.Topics[i], denialOf(i)))
	}
	return filter.Verdict{Respond: resp}
}

func fetchErrTopic(t *kmsg.FetchRequestTopic, d *denial) kmsg.FetchResponseTopic {
	st := kmsg.NewFetchResponseTopic()
	st.Topic, st.TopicID = t.Topic, t.TopicID
	for _, p := range t.Partitions {
		sp := kmsg.NewFetchResponseTopicPartition()
		sp.Partition = p.Partition
		sp.ErrorCode = d.code
		sp.HighWatermark = -1
		st.Partitions = append(st.Partitions, sp)
	}
	return st
}
