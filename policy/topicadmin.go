package policy

import (
	"fmt"
	"math"

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
	learn := filter.Then(func(cr *kmsg.CreateTopicsResponse) error {
		for _, t := range cr.Topics {
			if t.ErrorCode == 0 {
				c.e.ids.learn(t.TopicID, t.Topic)
			}
		}
		return nil
	})
	if denied == 0 {
		return filter.Verdict{OnResponse: learn}
	}
	return c.split(r, denied == len(orig), func() { r.Topics = keepAllowed(orig, denials) }, filter.Then(func(cr *kmsg.CreateTopicsResponse) error {
		if err := learn(cr); err != nil {
			return err
		}
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
	}))
}

// checkNewTopic applies topic_changes governance to a topic to be created.
// With an explicit replica assignment, its shape is what counts.
func (c *reqCtx) checkNewTopic(t *kmsg.CreateTopicsRequestTopic) *denial {
	nt := newTopic{name: t.Topic, partitions: t.NumPartitions, minRF: t.ReplicationFactor, maxRF: t.ReplicationFactor}
	if len(t.ReplicaAssignment) > 0 {
		nt.partitions = int32(len(t.ReplicaAssignment))
		nt.minRF, nt.maxRF = math.MaxInt16, 0
		for _, a := range t.ReplicaAssignment {
			n := int16(min(len(a.Replicas), math.MaxInt16))
			nt.minRF, nt.maxRF = min(nt.minRF, n), max(nt.maxRF, n)
		}
	}
	for _, cfg := range t.Configs {
		nt.configs = append(nt.configs, configEntry{cfg.Name, cfg.Value})
	}
	return c.checkTopicCreation(nt)
}

// checkTopicCreation applies every topic_changes rule that covers the
// topic to its creation, returning the first violation's denial. Topics
// created by CreateTopics and by auto-creation go through it alike.
func (c *reqCtx) checkTopicCreation(nt newTopic) *denial {
	if v := c.creationViolation(nt); v != nil {
		return c.violated(v, ResTopic, nt.name)
	}
	return nil
}

// creationViolation is the first topic_changes rule covering the topic
// that its creation breaks, without recording anything.
func (c *reqCtx) creationViolation(nt newTopic) *violation {
	nt = nt.resolve(c.st.gov.defaults)
	for _, g := range c.governance() {
		if g.topic == nil || !g.coversTopic(nt.name) {
			continue
		}
		if v := g.checkTopicShape(nt); v != nil {
			return v
		}
	}
	return nil
}

// handleDeleteTopics enforces Delete on each topic, named (v0-5) or, from
// v6, named or given by id; denied topics are split off.
func handleDeleteTopics(c *reqCtx, r *kmsg.DeleteTopicsRequest) filter.Verdict {
	if r.Version < 6 {
		return splitNamed(c, r, &r.TopicNames, OpDelete, ResTopic,
			func(dr *kmsg.DeleteTopicsResponse) *[]kmsg.DeleteTopicsResponseTopic { return &dr.Topics },
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
	return c.split(r, denied == len(orig), func() { r.Topics = keepAllowed(orig, denials) }, filter.Then(func(dr *kmsg.DeleteTopicsResponse) error {
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
	}))
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
		if d == nil {
			d = c.checkPartitionTotal(t.Topic, t.Count)
		}
		if denials[i] = d; d != nil {
			denied++
		}
	}
	if denied == 0 {
		return filter.Verdict{}
	}
	return c.split(r, denied == len(orig), func() { r.Topics = keepAllowed(orig, denials) }, filter.Then(func(cr *kmsg.CreatePartitionsResponse) error {
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
	}))
}

// checkPartitionTotal applies max_partitions to the total partition count
// a CreatePartitions asks for. A count the broker would refuse (below the
// current one) passes here and is refused there.
func (c *reqCtx) checkPartitionTotal(topic string, total int32) *denial {
	for _, g := range c.governance() {
		if g.topic == nil || g.topic.maxParts == 0 || !g.coversTopic(topic) || total <= g.topic.maxParts {
			continue
		}
		v := &violation{rule: g.name, check: "max_partitions", code: errPolicyViolation,
			what: fmt.Sprintf("%d partitions exceed max_partitions %d", total, g.topic.maxParts)}
		if d := c.violated(v, ResTopic, topic); d != nil {
			return d
		}
	}
	return nil
}
