package tenant

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Metadata: topics asked for by name get the prefix, by id are checked
// (another tenant's id is disguised, so the upstream answers
// UNKNOWN_TOPIC_ID without a name); the answer keeps only the tenant's
// topics, never an internal one, and carries the virtual cluster's id.
func metadataAPI() api {
	return api{
		key: key(kmsg.Metadata),
		request: typedRequestCtx(func(c *mapCtx, r *kmsg.MetadataRequest) {
			for i := range r.Topics {
				c.m.upNullableTopic(&r.Topics[i].Topic)
				r.Topics[i].TopicID = c.upID(r.Topics[i].TopicID)
			}
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.MetadataResponse) error {
			m.mapClusterID(&r.ClusterID)
			r.Topics = downDescribedTopics(m, r.Topics, func(t *kmsg.MetadataResponseTopic) (**string, *[16]byte, bool) {
				return &t.Topic, &t.TopicID, t.IsInternal
			})
			return nil
		}),
		fields: []string{"req.Topics.Topic", "req.Topics.TopicID", "resp.Topics.Topic", "resp.Topics.TopicID", "resp.ClusterID"},
	}
}

// mapClusterID replaces the upstream's cluster id with the virtual
// cluster's, when it has one.
func (m *Mapper) mapClusterID(id **string) {
	if m.clusterID != "" && *id != nil {
		upstream := **id
		m.upstreamClusterID.Store(&upstream)
		s := m.clusterID
		*id = &s
	}
}

// ApiVersions v5+ (KIP-1242 clients) says which cluster the client thinks
// it reached, and the broker refuses a mismatch with REBOOTSTRAP_REQUIRED:
// the virtual cluster's id becomes the upstream's again (or, before kproxy
// has seen the upstream's, none: no check). Any other id is left for the
// upstream to refuse.
func apiVersionsAPI() api {
	return api{
		key: key(kmsg.ApiVersions),
		request: simpleRequest(func(m *Mapper, r *kmsg.ApiVersionsRequest) {
			if m.clusterID == "" || r.ClusterID == nil || *r.ClusterID != m.clusterID {
				return
			}
			if upstream := m.upstreamClusterID.Load(); upstream != nil {
				r.ClusterID = upstream
			} else {
				r.ClusterID, r.NodeID = nil, -1
			}
		}),
		fields: []string{"req.ClusterID"},
	}
}

// DescribeCluster carries no name, only the cluster id.
func describeClusterAPI() api {
	return api{
		key: key(kmsg.DescribeCluster),
		response: typedResponse(func(m *Mapper, r *kmsg.DescribeClusterResponse) error {
			if m.clusterID != "" {
				upstream := r.ClusterID
				m.upstreamClusterID.Store(&upstream)
				r.ClusterID = m.clusterID
			}
			m.DownMessage(r.ErrorMessage)
			return nil
		}),
		fields: []string{"resp.ClusterID"},
	}
}

// DescribeTopicPartitions: names and the cursor get the prefix. Listing
// every topic (no names) starts at the tenant's prefix, where its topics
// are, all together in the upstream's name order; a next cursor past them
// ends the listing, so a cursor never leads a tenant to another's topics.
func describeTopicPartitionsAPI() api {
	return api{
		key: key(kmsg.DescribeTopicPartitions),
		request: simpleRequest(func(m *Mapper, r *kmsg.DescribeTopicPartitionsRequest) {
			upTopics(m, r.Topics, func(t *kmsg.DescribeTopicPartitionsRequestTopic) *string { return &t.Topic })
			switch {
			case r.Cursor != nil:
				r.Cursor.Topic = m.UpTopic(r.Cursor.Topic)
			case len(r.Topics) == 0 && m.names.Topic != "":
				c := kmsg.NewDescribeTopicPartitionsRequestCursor()
				c.Topic = m.names.Topic
				r.Cursor = &c
			}
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.DescribeTopicPartitionsResponse) error {
			r.Topics = downDescribedTopics(m, r.Topics, func(t *kmsg.DescribeTopicPartitionsResponseTopic) (**string, *[16]byte, bool) {
				return &t.Topic, &t.TopicID, t.IsInternal
			})
			if c := r.NextCursor; c != nil {
				if down, ok := m.DownTopic(c.Topic); ok {
					c.Topic = down
				} else {
					r.NextCursor = nil
				}
			}
			return nil
		}),
		fields: []string{"req.Topics.Topic", "req.Cursor.Topic", "resp.Topics.Topic", "resp.Topics.TopicID", "resp.NextCursor.Topic"},
	}
}

// downDescribedTopics maps the topics a Metadata or DescribeTopicPartitions
// response describes: every id learned with its upstream name, then only
// the tenant's kept (never an internal one), names and disguised ids back
// to the client's.
func downDescribedTopics[T any](m *Mapper, ts []T, ref func(*T) (name **string, id *[16]byte, internal bool)) []T {
	kept := ts[:0]
	for i := range ts {
		name, id, internal := ref(&ts[i])
		if *name != nil {
			m.LearnTopicID(*id, **name)
		}
		if internal || !m.downNullableTopic(name) {
			continue
		}
		*id = m.DownTopicID(*id)
		kept = append(kept, ts[i])
	}
	clear(ts[len(kept):])
	return kept
}
