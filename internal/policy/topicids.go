package policy

import "sync"

// maxTopicIDs bounds the id map; past it the map starts over, and ids are
// learned again from the next Metadata responses.
const maxTopicIDs = 1 << 20

// topicIDs maps topic ids to names. Requests from Produce v13 and Fetch
// v13 on (and a few others) name topics only by id, while rules name
// topics; the map is learned from the Metadata, CreateTopics and
// DescribeTopicPartitions responses kproxy relays. An id is never reused
// for another topic, so a stale entry is harmless.
type topicIDs struct {
	mu    sync.RWMutex
	names map[[16]byte]string
}

func (t *topicIDs) learn(id [16]byte, name string) {
	if id == ([16]byte{}) || name == "" {
		return
	}
	t.mu.RLock()
	known := t.names[id] == name
	t.mu.RUnlock()
	if known {
		return
	}
	t.mu.Lock()
	if t.names == nil || len(t.names) >= maxTopicIDs {
		t.names = map[[16]byte]string{}
	}
	t.names[id] = name
	t.mu.Unlock()
}

func (t *topicIDs) name(id [16]byte) (string, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	name, ok := t.names[id]
	return name, ok
}

// checkTopicRef decides check on a topic a request names by name or, in
// the versions that name topics by id, by id. An id kproxy cannot name is
// answered with UNKNOWN_TOPIC_ID; so is an id of a topic the principal may
// not describe, with the same message, so that the answer says neither the
// topic's name nor that it exists (Kafka itself answers such an id with
// TOPIC_AUTHORIZATION_FAILED and no name, holding ids not to be secret;
// kproxy promises more). A topic the principal may describe gets check's
// denial, which may name it.
func (c *reqCtx) checkTopicRef(name string, id [16]byte, check func(name string) *denial) *denial {
	resolved, known := c.topicName(name, id)
	if !known {
		return c.unknownTopic(id)
	}
	d := check(resolved)
	if d == nil || name != "" || c.forced != nil || d.code != errTopicAuthorizationFailed {
		return d
	}
	if c.decide(OpDescribe, ResTopic, resolved).Allowed {
		return d
	}
	return c.unknownTopicMessage(id)
}
