package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// autoCreation is governance's decision on the topics a Metadata request
// asks the broker to auto-create.
//
// A broker auto-creates a topic as a CreateTopics with its own defaults
// (num.partitions, default.replication.factor, no topic configs), and
// Kafka's create.topic.policy applies to it as to any CreateTopics. So
// does topic_changes here: the topic is checked as a CreateTopics with
// partitions and replication factor -1 and no configs, which
// policy.broker_defaults resolves where declared. If any listed topic
// would be refused, auto-creation is switched off for the request (the
// field is one per request): the broker then answers a topic that does
// not exist with UNKNOWN_TOPIC_OR_PARTITION, as it does when auto-creation
// is off or its creation was refused, and nothing is created.
type autoCreation struct {
	refused map[string]*violation
}

// consider checks the auto-creation of topic. In audit mode the would-be
// violation is recorded at once and nothing is refused.
func (a *autoCreation) consider(c *reqCtx, topic string) {
	v := c.creationViolation(newTopic{name: topic, partitions: -1, minRF: -1, maxRF: -1})
	if v == nil {
		return
	}
	if c.st.auditOnly {
		c.violated(v, ResTopic, topic)
		return
	}
	if a.refused == nil {
		a.refused = map[string]*violation{}
	}
	a.refused[topic] = v
}

// disables says whether auto-creation must be switched off.
func (a *autoCreation) disables() bool { return len(a.refused) > 0 }

// record logs a refusal for each refused topic the broker answered as not
// existing: a topic that exists was not going to be created, and switching
// auto-creation off changed nothing for it.
func (a *autoCreation) record(c *reqCtx, mr *kmsg.MetadataResponse) {
	if len(a.refused) == 0 {
		return
	}
	for _, t := range mr.Topics {
		if t.Topic == nil || t.ErrorCode != errUnknownTopicOrPartition {
			continue
		}
		if v := a.refused[*t.Topic]; v != nil {
			c.violated(v, ResTopic, *t.Topic)
		}
	}
}

// legacyAutoCreation handles Metadata v0-3 for listed topics. Those
// versions have no AllowAutoTopicCreation field: the broker auto-creates
// every listed topic that does not exist (where auto.create.topics.enable
// is on), so kproxy cannot switch it off for a topic the principal may
// not create (Create on the cluster or the topic) or governance refuses.
// It asks for all topics instead, which never auto-creates, and answers
// the listed topics from that: a topic that exists with its metadata, one
// that does not with TOPIC_AUTHORIZATION_FAILED when the principal may
// not create it (as Kafka answers) and UNKNOWN_TOPIC_OR_PARTITION
// otherwise. ok is false when no listed topic is refused (or in audit
// mode, which records the refusals and changes nothing): the request then
// takes the ordinary path.
func legacyAutoCreation(c *reqCtx, r *kmsg.MetadataRequest) (filter.Verdict, bool) {
	if c.forced != nil {
		return filter.Verdict{}, false
	}
	names := make([]string, 0, len(r.Topics))
	var noCreate map[string]bool
	var gov autoCreation
	for _, t := range r.Topics {
		if t.Topic == nil {
			continue
		}
		name := *t.Topic
		names = append(names, name)
		if !c.decide(OpDescribe, ResTopic, name).Allowed {
			continue // removed from the request on the ordinary path
		}
		if !c.decide(OpCreate, ResCluster, ClusterName).Allowed && !c.decide(OpCreate, ResTopic, name).Allowed {
			if noCreate == nil {
				noCreate = map[string]bool{}
			}
			noCreate[name] = true
			continue
		}
		gov.consider(c, name)
	}
	if len(noCreate) == 0 && !gov.disables() {
		return filter.Verdict{}, false
	}
	if c.st.auditOnly {
		for name := range noCreate {
			c.checkEither(name, nd(OpCreate, ResCluster, ""), nd(OpCreate, ResTopic, ""))
		}
		return filter.Verdict{}, false
	}
	hidden := make(map[string]bool, len(names))
	for _, name := range names {
		if !hidden[name] && c.check(OpDescribe, ResTopic, name) != nil {
			hidden[name] = true
		}
	}
	// v1+: null asks for all topics; v0 has no null, and an empty list
	// asks for all.
	r.Topics = nil
	if r.Version == 0 {
		r.Topics = []kmsg.MetadataRequestTopic{}
	}
	return filter.Verdict{Modified: true, OnResponse: filter.Then(func(mr *kmsg.MetadataResponse) error {
		c.learnMetadataIDs(mr)
		existing := make(map[string]kmsg.MetadataResponseTopic, len(mr.Topics))
		for _, t := range mr.Topics {
			if t.Topic != nil {
				existing[*t.Topic] = t
			}
		}
		answered := make(map[string]bool, len(names))
		topics := make([]kmsg.MetadataResponseTopic, 0, len(names))
		for _, name := range names {
			if answered[name] {
				continue
			}
			answered[name] = true
			t, exists := existing[name]
			switch {
			case hidden[name]:
				t = metadataErrTopic(name, [16]byte{}, &denial{code: errTopicAuthorizationFailed})
			case exists:
			case noCreate[name]:
				// As Kafka: Create is decided (and a denial recorded) only
				// for a topic that does not exist.
				d := c.checkEither(name, nd(OpCreate, ResCluster, ""), nd(OpCreate, ResTopic, ""))
				if d == nil {
					d = &denial{code: errUnknownTopicOrPartition}
				}
				t = metadataErrTopic(name, [16]byte{}, d)
			default:
				t = metadataErrTopic(name, [16]byte{}, &denial{code: errUnknownTopicOrPartition})
			}
			topics = append(topics, t)
		}
		mr.Topics = topics
		gov.record(c, mr)
		return nil
	})}, true
}
