// Package topicids names Kafka topic ids: the map learned from the
// responses kproxy relays, and the resolver that asks the cluster about an
// id not seen yet. The policy and the virtual clusters' name mapper share
// it.
package topicids

import "sync"

// maxTopicIDs bounds the id map; past it the map starts over, and ids are
// learned again from the next Metadata responses.
const maxTopicIDs = 1 << 20

// Map maps topic ids to names. Requests from Produce v13 and Fetch v13 on
// (and a few others) name topics only by id; the map is learned from the
// Metadata, CreateTopics and DescribeTopicPartitions responses kproxy
// relays. An id is never reused for another topic, so a stale entry is
// harmless. The zero Map is ready to use.
type Map struct {
	mu    sync.RWMutex
	names map[[16]byte]string
}

// Learn records that id names the topic name.
func (t *Map) Learn(id [16]byte, name string) {
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

// Name is id's topic name, if learned.
func (t *Map) Name(id [16]byte) (string, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	name, ok := t.names[id]
	return name, ok
}
