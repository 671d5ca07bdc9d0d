package tenant

import (
	"context"
	"crypto/rand"
	"sync"
)

// maxDisguised bounds the disguised ids remembered for mapping back; past
// it the memory starts over (an id disguised before then comes back to its
// client undisguised as an unknown id, which says nothing either).
const maxDisguised = 4096

// topicIDs is what a Mapper knows of upstream topic ids: names learned from
// the responses it maps or asked of the upstream (through the shared
// resolver), and the disguises it handed out.
type topicIDs struct {
	namer TopicNamer
	mask  [16]byte // disguise(id) = id XOR mask: unknown to the upstream, reversible

	mu        sync.Mutex
	disguised map[[16]byte][16]byte // disguise → the client's id
}

// TopicNamer names upstream topic ids: learned from responses, and asked of
// the cluster when not seen yet (behind a load balancer the client may have
// learned an id through another replica). *topicids.Resolver is one.
type TopicNamer interface {
	Learn(id [16]byte, name string)
	Name(ctx context.Context, id [16]byte) (string, bool)
}

func newTopicIDs(namer TopicNamer) *topicIDs {
	t := &topicIDs{namer: namer, disguised: map[[16]byte][16]byte{}}
	if _, err := rand.Read(t.mask[:]); err != nil || t.mask == ([16]byte{}) {
		t.mask = [16]byte{0x6b, 0x70, 0x72, 0x6f, 0x78, 0x79, 0x2d, 0x68, 0x69, 0x64, 0x64, 0x65, 0x6e, 0x2d, 0x69, 0x64}
	}
	return t
}

// UpTopicID is the id the upstream is sent for the tenant's topic id: the
// id itself when it names this tenant's topic, else a disguised id the
// upstream does not know, so that the upstream answers UNKNOWN_TOPIC_ID
// exactly as for any unknown id (DownTopicID maps it back). The zero id
// ("no id") stays zero.
func (m *Mapper) UpTopicID(ctx context.Context, id [16]byte) [16]byte {
	if id == ([16]byte{}) {
		return id
	}
	if name, ok := m.ids.namer.Name(ctx, id); ok {
		if _, mine := m.DownTopic(name); mine {
			return id
		}
	}
	return m.ids.disguise(id)
}

// DownTopicID is the id the tenant is shown for an id the upstream
// answered with: a disguised id becomes the tenant's again; any other id
// is unchanged (the caller hides ids that are not this tenant's by name).
func (m *Mapper) DownTopicID(id [16]byte) [16]byte {
	t := m.ids
	t.mu.Lock()
	orig, ok := t.disguised[id]
	t.mu.Unlock()
	if ok {
		return orig
	}
	return id
}

// LearnTopicID records that the upstream topic id is named upstreamName (as
// seen in a response), so later requests by id are mapped without asking
// the upstream.
func (m *Mapper) LearnTopicID(id [16]byte, upstreamName string) {
	if id == ([16]byte{}) || upstreamName == "" {
		return
	}
	m.ids.namer.Learn(id, upstreamName)
}

func (t *topicIDs) disguise(id [16]byte) [16]byte {
	var d [16]byte
	for i := range d {
		d[i] = id[i] ^ t.mask[i]
	}
	t.mu.Lock()
	if len(t.disguised) >= maxDisguised {
		clear(t.disguised)
	}
	t.disguised[d] = id
	t.mu.Unlock()
	return d
}
