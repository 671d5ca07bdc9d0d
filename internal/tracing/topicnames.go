package tracing

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// maxTopicNames bounds the topic id → name map: past it, names of new
// topics are not learned (their spans carry no destination name).
const maxTopicNames = 100_000

// topicNames maps topic ids to names, learned from the Metadata responses
// kproxy relays (which it decodes anyway, to rewrite broker addresses):
// Produce and Fetch from v13 name topics by id only.
type topicNames struct {
	mu    sync.RWMutex
	names map[[16]byte]string
}

// learn records the ids and names of resp's topics.
func (n *topicNames) learn(resp *kmsg.MetadataResponse) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.names == nil {
		n.names = map[[16]byte]string{}
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || t.TopicID == [16]byte{} || len(n.names) >= maxTopicNames && n.names[t.TopicID] == "" {
			continue
		}
		n.names[t.TopicID] = *t.Topic
	}
	return nil
}

// name is id's topic name, "" when not learned.
func (n *topicNames) name(id [16]byte) string {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.names[id]
}

// Phase places the tracer in filter.PhaseProgram, after the name
// boundary and the policy's response hooks: it learns topics as the
// client is told them (a tenant's unprefixed), so that spans of requests
// naming a topic by id carry the name the client knows.
func (t *Tracer) Phase() filter.Phase { return filter.PhaseProgram }

// Register implements filter.Filter: the tracer learns topic names from
// Metadata responses.
func (t *Tracer) Register(r *filter.Registry) {
	filter.OnResponse(r, t.topics.learn)
}
