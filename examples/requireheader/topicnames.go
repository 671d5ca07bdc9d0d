package main

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicNames maps topic ids to names as Metadata responses tell clients
// (in the names the client sees: a virtual cluster's, not the
// upstream's). Clients ask for metadata before they produce, so the ids
// of a Produce request have been seen.
type topicNames struct {
	mu   sync.RWMutex
	byID map[[16]byte]string
}

// learn records the ids and names of resp's topics.
func (n *topicNames) learn(resp *kmsg.MetadataResponse) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.byID == nil {
		n.byID = map[[16]byte]string{}
	}
	for _, t := range resp.Topics {
		if t.Topic != nil && t.TopicID != [16]byte{} && t.ErrorCode == 0 {
			n.byID[t.TopicID] = *t.Topic
		}
	}
	return nil
}

// lookup is id's name, if a Metadata response named it; n may be nil.
func (n *topicNames) lookup(id [16]byte) (string, bool) {
	if n == nil {
		return "", false
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	name, ok := n.byID[id]
	return name, ok
}
