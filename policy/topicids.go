package policy

import "github.com/kproxy/kproxy/internal/topicids"

// topicIDs maps topic ids to names (topicids.Map): requests from Produce
// v13 and Fetch v13 on name topics only by id, while rules name topics.
type topicIDs struct{ m topicids.Map }

func (t *topicIDs) learn(id [16]byte, name string) { t.m.Learn(id, name) }

func (t *topicIDs) name(id [16]byte) (string, bool) { return t.m.Name(id) }

// Requester sends a request to the cluster as kproxy itself (upstream.tls
// and upstream.sasl); *kgo.Client is one (upstreamclient.New builds it).
type Requester = topicids.Requester

// WithTopicResolver makes the enforcer ask the cluster, through r, for the
// name of a topic id it has not learned from a relayed response, instead
// of answering the client UNKNOWN_TOPIC_ID (topicids.Resolver).
func WithTopicResolver(r Requester) Option { return func(o *options) { o.resolver = r } }

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
