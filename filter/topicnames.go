package filter

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxTopicNames bounds a TopicNames: past it, the names of new topics are
// not learned, so a cluster with endless topics cannot grow it forever.
const maxTopicNames = 100_000

// TopicNames maps topic ids to names as Metadata responses name them, for
// a filter of requests that name topics by id only (Produce and Fetch from
// v13). Clients ask for metadata before they produce or fetch, so the ids
// of those requests have been seen. Register Learn as the filter's
// Metadata response handler: it learns the names as they stand in the
// filter's phase (in PhaseProgram, a virtual cluster's names, not the
// upstream's). The zero value is empty and ready; it is safe for
// concurrent use.
type TopicNames struct {
	mu   sync.RWMutex
	byID map[[16]byte]string
}

// Learn records the ids and names of resp's topics that carry no error.
func (n *TopicNames) Learn(resp *kmsg.MetadataResponse) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.byID == nil {
		n.byID = map[[16]byte]string{}
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || t.TopicID == [16]byte{} || t.ErrorCode != 0 {
			continue
		}
		if _, known := n.byID[t.TopicID]; !known && len(n.byID) >= maxTopicNames {
			continue
		}
		n.byID[t.TopicID] = *t.Topic
	}
	return nil
}

// Lookup is id's name, if a Metadata response named it; n may be nil.
func (n *TopicNames) Lookup(id [16]byte) (string, bool) {
	if n == nil {
		return "", false
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	name, ok := n.byID[id]
	return name, ok
}
