package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// handleOffsetFetch enforces Describe on the group and on each topic, as
// Kafka does. Listed topics the principal may not describe are answered
// with TOPIC_AUTHORIZATION_FAILED; a request for all of a group's topics
// is answered with the describable ones. Batched requests (v8+) are split
// per group.
func handleOffsetFetch(c *reqCtx, r *kmsg.OffsetFetchRequest) filter.Verdict {
	if r.Version >= 8 {
		return offsetFetchGroups(c, r)
	}
	if gd := c.check(OpDescribe, ResGroup, r.Group); gd != nil {
		resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
		if r.Version >= 2 {
			resp.ErrorCode = gd.code
			return filter.Verdict{Respond: resp}
		}
		// v0-1 have no top-level error: every partition carries it.
		for i := range r.Topics {
			resp.Topics = append(resp.Topics, offsetFetchErrTopic(r.Topics[i].Topic, r.Topics[i].Partitions, gd))
		}
		return filter.Verdict{Respond: resp}
	}
	if r.Topics == nil { // all topics (v2+)
		return filter.Verdict{OnResponse: filter.Then(func(or *kmsg.OffsetFetchResponse) error {
			or.Topics = keepOnly(or.Topics, func(t kmsg.OffsetFetchResponseTopic) bool { return c.visible(OpDescribe, ResTopic, t.Topic) })
			return nil
		})}
	}
	l := topicListing(&r.Topics, func(t *kmsg.OffsetFetchRequestTopic) topicKey { return byName(t.Topic) },
		func(resp *kmsg.OffsetFetchResponse) *[]kmsg.OffsetFetchResponseTopic { return &resp.Topics })
	l.denied = func(t *kmsg.OffsetFetchRequestTopic, d *denial) kmsg.OffsetFetchResponseTopic {
		return offsetFetchErrTopic(t.Topic, t.Partitions, d)
	}
	return splitTopics(c, r, l, nil, c.topicCheck(OpDescribe))
}

func offsetFetchErrTopic(topic string, partitions []int32, d *denial) kmsg.OffsetFetchResponseTopic {
	st := kmsg.NewOffsetFetchResponseTopic()
	st.Topic = topic
	if d == nil {
		return st
	}
	for _, p := range partitions {
		sp := kmsg.NewOffsetFetchResponseTopicPartition()
		sp.Partition, sp.Offset, sp.ErrorCode = p, -1, d.code
		st.Partitions = append(st.Partitions, sp)
	}
	return st
}

// groupPlan is what the policy decided for one group of a batched
// OffsetFetch.
type groupPlan struct {
	denied  *denial    // the whole group
	keys    []topicKey // listed topics
	topics  []*denial  // per listed topic
	nTopics int        // denied topics
}

func offsetFetchGroups(c *reqCtx, r *kmsg.OffsetFetchRequest) filter.Verdict {
	orig := r.Groups
	plans := make([]groupPlan, len(orig))
	deniedGroups, modified := 0, false
	for i := range orig {
		g := &orig[i]
		p := &plans[i]
		if p.denied = c.check(OpDescribe, ResGroup, g.Group); p.denied != nil {
			deniedGroups++
			modified = true
			continue
		}
		if g.Topics == nil {
			continue
		}
		p.keys, p.topics, p.nTopics = c.topicDenials(len(g.Topics),
			func(j int) (string, [16]byte) { return g.Topics[j].Topic, g.Topics[j].TopicID },
			func(name string) *denial { return c.check(OpDescribe, ResTopic, name) })
		modified = modified || p.nTopics > 0
	}
	anyAll := false
	for i := range orig {
		anyAll = anyAll || (plans[i].denied == nil && orig[i].Topics == nil)
	}
	if !modified && !anyAll {
		return filter.Verdict{}
	}
	merge := filter.Then(func(or *kmsg.OffsetFetchResponse) error {
		planOf := make(map[string]int, len(orig))
		for i := len(orig) - 1; i >= 0; i-- {
			planOf[orig[i].Group] = i
		}
		for k := range or.Groups {
			rg := &or.Groups[k]
			i, ok := planOf[rg.Group]
			if !ok || plans[i].denied != nil {
				continue
			}
			if orig[i].Topics == nil {
				rg.Topics = keepOnly(rg.Topics, func(t kmsg.OffsetFetchResponseGroupTopic) bool {
					name, known := c.topicName(t.Topic, t.TopicID)
					return known && c.visible(OpDescribe, ResTopic, name)
				})
				continue
			}
			if plans[i].nTopics == 0 {
				continue
			}
			p, ts := &plans[i], orig[i].Topics
			rg.Topics = mergeInOrder(rg.Topics, func(t *kmsg.OffsetFetchResponseGroupTopic) topicKey { return topicKey{t.Topic, t.TopicID} }, p.keys,
				func(j int) (kmsg.OffsetFetchResponseGroupTopic, bool) {
					d, ok := denialAt(p.topics, j)
					if !ok {
						return kmsg.OffsetFetchResponseGroupTopic{}, false
					}
					st := kmsg.NewOffsetFetchResponseGroupTopic()
					st.Topic, st.TopicID = ts[j].Topic, ts[j].TopicID
					for _, part := range ts[j].Partitions {
						sp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
						sp.Partition, sp.Offset, sp.ErrorCode = part, -1, d.code
						st.Partitions = append(st.Partitions, sp)
					}
					return st, true
				})
		}
		keys := make([]string, len(orig))
		for i := range orig {
			keys[i] = orig[i].Group
		}
		or.Groups = mergeInOrder(or.Groups, func(g *kmsg.OffsetFetchResponseGroup) string { return g.Group }, keys,
			func(i int) (kmsg.OffsetFetchResponseGroup, bool) {
				d := plans[i].denied
				if d == nil {
					return kmsg.OffsetFetchResponseGroup{}, false
				}
				sg := kmsg.NewOffsetFetchResponseGroup()
				sg.Group, sg.ErrorCode = orig[i].Group, d.code
				return sg, true
			})
		return nil
	})
	if !modified {
		return filter.Verdict{OnResponse: merge}
	}
	strip := func() {
		kept := make([]kmsg.OffsetFetchRequestGroup, 0, len(orig))
		for i := range orig {
			p := &plans[i]
			if p.denied != nil {
				continue
			}
			g := orig[i]
			if p.nTopics > 0 {
				g.Topics = keepAllowed(orig[i].Topics, p.topics)
			}
			kept = append(kept, g)
		}
		r.Groups = kept
	}
	// A group all of whose listed topics are denied still goes upstream
	// with an empty list: the group's own error code must come from there.
	return c.split(r, deniedGroups == len(orig), strip, merge)
}
