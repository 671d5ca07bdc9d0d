package tenant

import "context"

// upTopicRef maps a topic named by name, by id or both (the version
// decides which is set; the empty name and the zero id stay as they are).
func upTopicRef(ctx context.Context, m *Mapper, name *string, id *[16]byte) {
	*name = m.UpTopic(*name)
	if *id != ([16]byte{}) {
		*id = m.UpTopicID(ctx, *id)
	}
}

// downTopicRef maps a topic of a response named by name, by id or both;
// false: the topic is not the tenant's (hide it). An id with its name
// teaches the Mapper the id.
func downTopicRef(m *Mapper, name *string, id *[16]byte) bool {
	if *id != ([16]byte{}) {
		if *name != "" {
			m.LearnTopicID(*id, *name)
		}
		*id = m.DownTopicID(*id)
	}
	if *name == "" {
		return true
	}
	d, ok := m.DownTopic(*name)
	*name = d
	return ok
}

// keepTopicRefs keeps the elements of list whose topic maps down.
func keepTopicRefs[T any](m *Mapper, list []T, ref func(*T) (*string, *[16]byte)) []T {
	kept := list[:0]
	for i := range list {
		name, id := ref(&list[i])
		if downTopicRef(m, name, id) {
			kept = append(kept, list[i])
		}
	}
	clear(list[len(kept):])
	return kept
}
