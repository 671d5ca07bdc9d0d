package tenant

import (
	"context"
	"sync"
)

// topicIDs is what a Mapper knows of upstream topic ids: names learned from
// the responses it maps, and (with an upstream) names asked for.
type topicIDs struct {
	upstream Requester
	mu       sync.RWMutex
	names    map[[16]byte]string
}

func newTopicIDs() *topicIDs { return &topicIDs{names: map[[16]byte]string{}} }

// UpTopicID is the id the upstream is sent for the tenant's topic id: the
// id itself when it is this tenant's topic, else a disguised id the
// upstream does not know, so that the upstream answers UNKNOWN_TOPIC_ID
// (DownTopicID maps it back). The zero id ("no id") stays zero.
func (m *Mapper) UpTopicID(ctx context.Context, id [16]byte) [16]byte {
	// Skeleton: implemented by the vc-topics branch.
	_ = ctx
	return id
}

// DownTopicID is the id the tenant is shown for an id the upstream
// answered with: a disguised id becomes the tenant's again; any other id
// is unchanged (the caller hides ids that are not this tenant's by name).
func (m *Mapper) DownTopicID(id [16]byte) [16]byte { return id }

// LearnTopicID records that the upstream topic id is named name (as seen in
// a response), so later requests by id are mapped without asking the
// upstream.
func (m *Mapper) LearnTopicID(id [16]byte, upstreamName string) {
	if id == ([16]byte{}) || upstreamName == "" {
		return
	}
	m.ids.mu.Lock()
	m.ids.names[id] = upstreamName
	m.ids.mu.Unlock()
}
