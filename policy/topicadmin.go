package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// handleCreateTopics enforces Create on the cluster or on each topic (as
// Kafka), Describe on each topic, and the topic_changes governance; denied
// topics are split off. Topic ids in the answer are learned for later
// requests that use them.
//
// Kafka checks only Create and answers an existing topic with
// TOPIC_ALREADY_EXISTS whether or not the principal may describe it, which
// makes CreateTopics (validate_only, even) an existence oracle for hidden
// topics. kproxy also asks Describe, as Kafka does for auto-creation by
// Metadata, so that the answer for a topic the principal may not describe
// is TOPIC_AUTHORIZATION_FAILED whether or not it exists.
func handleCreateTopics(c *reqCtx, r *kmsg.CreateTopicsRequest) filter.Verdict {
	orig := r.Topics
	keys := make([]string, len(orig))
	denials := make([]*denial, len(orig))
	denied := 0
	for i := range orig {
		t := &orig[i]
		keys[i] = t.Topic
		d := c.checkEither(t.Topic, nd(OpCreate, ResCluster, ""), nd(OpCreate, ResTopic, ""))
		if d == nil {
			d = c.check(OpDescribe, ResTopic, t.Topic)
		}
		if d == nil {
			d = c.checkNewTopic(t)
		}
		if denials[i] = d; d != nil {
			denied++
		}
	}
	learn := func(resp kmsg.Response) error {
		cr, ok := resp.(*kmsg.CreateTopicsResponse)
		if !ok {
			return errWrongResponse(resp)
		}
		for _, t := range cr.Topics {
			if t.ErrorCode == 0 {
				c.e.ids.learn(t.TopicID, t.Topic)
			}
		}
		return nil
	}
	if denied == 0 {
		return filter.Verdict{OnResponse: learn}
	}
	return c.split(r, denied == len(orig), func() { r.Topics = keepAllowed(orig, denials) }, func(resp kmsg.Response) error {
		if err := learn(resp); err != nil {
			return err
		}
		cr := resp.(*kmsg.CreateTopicsResponse)
		cr.Topics = mergeInOrder(cr.Topics, func(t *kmsg.CreateTopicsResponseTopic) string { return t.Topic }, keys,
			func(i int) (kmsg.CreateTopicsResponseTopic, bool) {
				d, ok := denialAt(denials, i)
				if !ok {
					return kmsg.CreateTopicsResponseTopic{}, false
				}
				st := kmsg.NewCreateTopicsResponseTopic()
				st.Topic, st.ErrorCode, st.ErrorMessage = keys[i], d.code, d.msgPtr()
				return st, true
			})
		return nil
	})
}

// checkNewTopic applies topic_changes governance to a topic to be created.
// With an explicit replica assignment, its shape is what counts.
func (c *reqCtx) checkNewTopic(t *kmsg.CreateTopicsRequestTopic) *denial {
	var configs map[string]*string
	for _, g := range c.governance() {
		if g.topic == nil || !g.coversTopic(t.Topic) {
			continue
		}
		if configs == nil {
			configs = make(map[string]*string, len(t.Configs))
			for _, cfg := range t.Configs {
				configs[cfg.Name] = cfg.Value
			}
		}
		partitions, rf := t.NumPartitions, t.ReplicationFactor
		if len(t.ReplicaAssignment) > 0 {
			partitions = int32(len(t.ReplicaAssignment))
			rf = int16(len(t.ReplicaAssignment[0].Replicas))
		}
		if v := g.checkTopicShape(t.Topic, partitions, rf, configs); v != nil {
			if d := c.violated(v, ResTopic, t.Topic); d != nil {
				return d
			}
		}
	}
	return nil
}

// handleDeleteTopics enforces Delete on each topic, named (v0-5) or, from
// v6, named or given by id; denied topics are split off.
func handleDeleteTopics(c *reqCtx, r *kmsg.DeleteTopicsRequest) filter.Verdict {
	if r.Version < 6 {
		return splitNamed(c, r, r.TopicNames, OpDelete, ResTopic, func(t []string) { r.TopicNames = t },
			func(resp kmsg.Response) (*[]kmsg.DeleteTopicsResponseTopic, bool) {
				dr, ok := resp.(*kmsg.DeleteTopicsResponse)
				if !ok {
					return nil, false
				}
				return &dr.Topics, true
			},
			func(t *kmsg.DeleteTopicsResponseTopic) string { return deref(t.Topic) },
			func(topic string, d *denial) kmsg.DeleteTopicsResponseTopic {
				st := kmsg.NewDeleteTopicsResponseTopic()
				st.Topic, st.ErrorCode, st.ErrorMessage = &topic, d.code, d.msgPtr()
				return st
			})
	}
	orig := r.Topics
	// Entries are matched by name: the upstream names the topics it
	// answers, even those asked for by id.
	keys := make([]string, len(orig))
	denials := make([]*denial, len(orig))
	denied := 0
	for i, t := range orig {
		keys[i], _ = c.topicName(deref(t.Topic), t.TopicID)
		denials[i] = c.checkTopicRef(deref(t.Topic), t.TopicID, func(name string) *denial { return c.check(OpDelete, ResTopic, name) })
		if denials[i] != nil {
			denied++
		}
	}
	if denied == 0 {
		return filter.Verdict{}
	}
	return c.split(r, denied == len(orig), func() { r.Topics = keepAllowed(orig, denials) }, func(resp kmsg.Response) error {
		dr, ok := resp.(*kmsg.DeleteTopicsResponse)
		if !ok {
			return errWrongResponse(resp)
		}
		dr.Topics = mergeInOrder(dr.Topics, func(t *kmsg.DeleteTopicsResponseTopic) string {
			name, _ := c.topicName(deref(t.Topic), t.TopicID)
			return name
		}, keys, func(i int) (kmsg.DeleteTopicsResponseTopic, bool) {
			d, ok := denialAt(denials, i)
			if !ok {
				return kmsg.DeleteTopicsResponseTopic{}, false
			}
			st := kmsg.NewDeleteTopicsResponseTopic()
			st.Topic, st.TopicID = orig[i].Topic, orig[i].TopicID
			st.ErrorCode, st.ErrorMessage = d.code, d.msgPtr()
			return st, true
		})
		return nil
	})
}

// handleCreatePartitions enforces Alter on each topic and max_partitions
// on its new total; denied topics are split off.
func handleCreatePartitions(c *reqCtx, r *kmsg.CreatePartitionsRequest) filter.Verdict {
	orig := r.Topics
	keys := make([]string, len(orig))
	denials := make([]*denial, len(orig))
	denied := 0
	for i, t := range orig {
		keys[i] = t.Topic
		d := c.check(OpAlter, ResTopic, t.Topic)
		for _, g := range c.governance() {
			if d != nil || g.topic == nil || g.topic.maxParts == 0 || !g.coversTopic(t.Topic) {
				continue
			}
			if v := g.checkTopicShape(t.Topic, t.Count, -1, nil); v != nil && v.check == "max_partitions" {
				d = c.violated(v, ResTopic, t.Topic)
			}
		}
		if denials[i] = d; d != nil {
			denied++
		}
	}
	if denied == 0 {
		return filter.Verdict{}
	}
	return c.split(r, denied == len(orig), func() { r.Topics = keepAllowed(orig, denials) }, func(resp kmsg.Response) error {
		cr, ok := resp.(*kmsg.CreatePartitionsResponse)
		if !ok {
			return errWrongResponse(resp)
		}
		cr.Topics = mergeInOrder(cr.Topics, func(t *kmsg.CreatePartitionsResponseTopic) string { return t.Topic }, keys,
			func(i int) (kmsg.CreatePartitionsResponseTopic, bool) {
				d, ok := denialAt(denials, i)
				if !ok {
					return kmsg.CreatePartitionsResponseTopic{}, false
				}
				st := kmsg.NewCreatePartitionsResponseTopic()
				st.Topic, st.ErrorCode, st.ErrorMessage = keys[i], d.code, d.msgPtr()
				return st, true
			})
		return nil
	})
}
