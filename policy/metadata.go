package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// handleMetadata enforces Describe on topics. A request for all topics is
// answered with the topics the principal may describe; topics it lists
// and may not describe are removed from the request (so they are never
// auto-created) and answered with TOPIC_AUTHORIZATION_FAILED, as Kafka
// answers them. Where the client asks for auto-creation of a topic the
// principal may not create, auto-creation is turned off for the request
// and a topic that then turns out not to exist is answered with
// TOPIC_AUTHORIZATION_FAILED, as from Kafka. So it is where topic_changes
// governance would refuse the topic's creation (autoCreation).
//
// Metadata is always forwarded, even when every listed topic is denied:
// the client still needs the brokers and the controller.
func handleMetadata(c *reqCtx, r *kmsg.MetadataRequest) filter.Verdict {
	allTopics := r.Topics == nil || (r.Version == 0 && len(r.Topics) == 0)
	if allTopics {
		return filter.Verdict{OnResponse: filter.Then(func(mr *kmsg.MetadataResponse) error {
			c.learnMetadataIDs(mr)
			mr.Topics = keepOnly(mr.Topics, func(t kmsg.MetadataResponseTopic) bool {
				return t.Topic == nil || c.visible(OpDescribe, ResTopic, *t.Topic)
			})
			return nil
		})}
	}

	if r.Version < 4 {
		if v, ok := legacyAutoCreation(c, r); ok {
			return v
		}
	}
	orig := r.Topics
	names := make([]string, len(orig)) // "" for an id kproxy cannot name yet
	denials := make([]*denial, len(orig))
	noCreate := map[string]*createRefusal{}
	var govCreate autoCreation
	denied := 0
	for i, t := range orig {
		var name string
		if t.Topic != nil {
			name = *t.Topic
		} else if n, ok := c.topicName("", t.TopicID); ok {
			name = n
		}
		names[i] = name
		if name == "" {
			continue // decided on the name the upstream answers with
		}
		if denials[i] = c.checkTopicRef(deref(t.Topic), t.TopicID, func(name string) *denial { return c.check(OpDescribe, ResTopic, name) }); denials[i] != nil {
			denied++
			continue
		}
		if !r.AllowAutoTopicCreation {
			continue
		}
		if refusal := c.refuseCreate(name); refusal != nil {
			noCreate[name] = refusal
		} else {
			govCreate.consider(c, name)
		}
	}
	modified := false
	if len(noCreate) > 0 || govCreate.disables() {
		r.AllowAutoTopicCreation = false
		modified = true
	}
	if denied > 0 {
		r.Topics = keepAllowed(orig, denials)
		if len(r.Topics) == 0 && r.Version >= 1 {
			// v1+: an empty list asks for no topics (nil would ask for all).
			// v0 cannot ask for none; the answer is trimmed below instead.
			r.Topics = []kmsg.MetadataRequestTopic{}
		}
		modified = true
	}
	// v0 cannot ask for no topics: with every listed topic denied, the
	// empty list asks for all, and the answer must be trimmed to none.
	allStandIn := r.Version == 0 && len(r.Topics) == 0
	requested := make(map[string]bool, len(names))
	for i, n := range names {
		if denials[i] == nil && n != "" {
			requested[n] = true
		}
	}
	unresolved := unresolvedMetadataIDs(orig, names)
	return filter.Verdict{Modified: modified, OnResponse: filter.Then(func(mr *kmsg.MetadataResponse) error {
		c.learnMetadataIDs(mr)
		govCreate.record(c, mr)
		kept := mr.Topics[:0]
		for _, t := range mr.Topics {
			name := ""
			if t.Topic != nil {
				name = *t.Topic
			}
			switch {
			case name == "":
				if unresolved[t.TopicID] && t.ErrorCode == errTopicAuthorizationFailed {
					t = metadataUnknownID(t.TopicID)
				}
			case !requested[name]:
				// Unasked: the v0 stand-in's extra topics, or a topic asked
				// for by an id kproxy had not learned.
				if unresolved[t.TopicID] && !c.visible(OpDescribe, ResTopic, name) {
					t = metadataUnknownID(t.TopicID)
				} else if allStandIn || !c.visible(OpDescribe, ResTopic, name) {
					continue
				}
			case noCreate[name] != nil && t.ErrorCode == errUnknownTopicOrPartition:
				noCreate[name].record(c)
				t = metadataErrTopic(name, t.TopicID, &denial{code: errTopicAuthorizationFailed})
			}
			kept = append(kept, t)
		}
		mr.Topics = kept
		if denied == 0 {
			return nil
		}
		keys := make([]string, len(orig))
		for i := range orig {
			keys[i] = names[i]
		}
		mr.Topics = mergeInOrder(mr.Topics, func(t *kmsg.MetadataResponseTopic) string {
			if t.Topic == nil {
				return ""
			}
			return *t.Topic
		}, keys, func(i int) (kmsg.MetadataResponseTopic, bool) {
			d, ok := denialAt(denials, i)
			if !ok {
				return kmsg.MetadataResponseTopic{}, false
			}
			if orig[i].Topic == nil {
				// Asked for by id: the answer names no topic.
				return metadataIDErrTopic(orig[i].TopicID, d), true
			}
			return metadataErrTopic(names[i], orig[i].TopicID, d), true
		})
		return nil
	})}
}

func metadataErrTopic(name string, id [16]byte, d *denial) kmsg.MetadataResponseTopic {
	t := kmsg.NewMetadataResponseTopic()
	t.Topic = &name
	t.TopicID = id
	t.ErrorCode = d.code
	return t
}

// learnMetadataIDs records the topic ids of a Metadata response, before any
// are hidden, for requests that name topics by id.
func (c *reqCtx) learnMetadataIDs(mr *kmsg.MetadataResponse) {
	for _, t := range mr.Topics {
		if t.Topic != nil && t.ErrorCode == 0 {
			c.e.ids.learn(t.TopicID, *t.Topic)
		}
	}
}

// unresolvedMetadataIDs is the set of topic ids a Metadata request asks
// for that kproxy could not name; the upstream's answer names them.
func unresolvedMetadataIDs(topics []kmsg.MetadataRequestTopic, names []string) map[[16]byte]bool {
	var ids map[[16]byte]bool
	for i, t := range topics {
		if t.Topic == nil && names[i] == "" && t.TopicID != ([16]byte{}) {
			if ids == nil {
				ids = map[[16]byte]bool{}
			}
			ids[t.TopicID] = true
		}
	}
	return ids
}

// metadataIDErrTopic answers a topic asked for by id with d and no name.
func metadataIDErrTopic(id [16]byte, d *denial) kmsg.MetadataResponseTopic {
	t := kmsg.NewMetadataResponseTopic()
	t.TopicID = id
	t.ErrorCode = d.code
	return t
}

// metadataUnknownID is the answer for an id of a topic the principal may
// not describe: the one for an id that names no topic.
func metadataUnknownID(id [16]byte) kmsg.MetadataResponseTopic {
	return metadataIDErrTopic(id, &denial{code: errUnknownTopicID})
}

// createRefusal is a refused Create for a topic a Metadata request asked
// the broker to auto-create, not yet recorded: Kafka checks Create only
// for a topic that does not exist, so the refusal is audited and counted
// once the answer shows the topic did not exist (most clients ask to
// auto-create every topic they produce to, existing or not).
type createRefusal struct {
	res  ResourceType
	name string
	d    Decision
}

// refuseCreate decides Create for name's auto-creation, on the cluster or
// on the topic, as checkEither does. It returns nil when auto-creation may
// go on (allowed, recorded now; or denied in audit mode, recorded now, as
// the broker may then create the topic and its answer would not tell),
// and otherwise the refusal for record.
func (c *reqCtx) refuseCreate(name string) *createRefusal {
	d := c.decide(OpCreate, ResCluster, ClusterName)
	res, resName := ResCluster, ClusterName
	if !d.Allowed {
		res, resName, d = ResTopic, name, c.decide(OpCreate, ResTopic, name)
	}
	if d.Allowed || c.st.auditOnly {
		c.record(OpCreate, res, resName, d)
		return nil
	}
	return &createRefusal{res: res, name: resName, d: d}
}

// record audits and counts the refusal.
func (r *createRefusal) record(c *reqCtx) { c.record(OpCreate, r.res, r.name, r.d) }
