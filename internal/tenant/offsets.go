package tenant

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// offsetAPIs maps the committed-offset APIs of groups.
func offsetAPIs() []api {
	return []api{
		typedEntry(kmsg.OffsetCommit.Int16(), upOffsetCommit, downOffsetCommit,
			"req.Group", "req.Topics.Topic", "req.Topics.TopicID", "resp.Topics.Topic", "resp.Topics.TopicID"),
		typedEntry(kmsg.OffsetFetch.Int16(), upOffsetFetch, downOffsetFetch,
			"req.Group", "req.Topics.Topic", "req.Groups.Group", "req.Groups.Topics.Topic", "req.Groups.Topics.TopicID",
			"resp.Topics.Topic", "resp.Groups.Group", "resp.Groups.Topics.Topic", "resp.Groups.Topics.TopicID"),
		typedEntry(kmsg.OffsetDelete.Int16(), upOffsetDelete, downOffsetDelete,
			"req.Group", "req.Topics.Topic", "resp.Topics.Topic"),
	}
}

func upOffsetCommit(ctx context.Context, m *Mapper, r *kmsg.OffsetCommitRequest) error {
	r.Group = m.UpGroup(r.Group)
	for i := range r.Topics {
		upTopicRef(ctx, m, &r.Topics[i].Topic, &r.Topics[i].TopicID)
	}
	return nil
}

func downOffsetCommit(m *Mapper, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse) error {
	resp.Topics = keepTopicRefs(m, resp.Topics, func(t *kmsg.OffsetCommitResponseTopic) (*string, *[16]byte) { return &t.Topic, &t.TopicID })
	return nil
}

func upOffsetFetch(ctx context.Context, m *Mapper, r *kmsg.OffsetFetchRequest) error {
	r.Group = m.UpGroup(r.Group)
	upTopics(m, r.Topics, func(t *kmsg.OffsetFetchRequestTopic) *string { return &t.Topic })
	for i := range r.Groups {
		g := &r.Groups[i]
		g.Group = m.UpGroup(g.Group)
		for j := range g.Topics {
			upTopicRef(ctx, m, &g.Topics[j].Topic, &g.Topics[j].TopicID)
		}
	}
	return nil
}

// downOffsetFetch also hides, of a group asked for with all its topics,
// any topic that is not the tenant's.
func downOffsetFetch(m *Mapper, _ *kmsg.OffsetFetchRequest, resp *kmsg.OffsetFetchResponse) error {
	resp.Topics = keepMapped(resp.Topics, func(t *kmsg.OffsetFetchResponseTopic) *string { return &t.Topic }, m.DownTopic)
	resp.Groups = keepMapped(resp.Groups, func(g *kmsg.OffsetFetchResponseGroup) *string { return &g.Group }, m.DownGroup)
	for i := range resp.Groups {
		g := &resp.Groups[i]
		g.Topics = keepTopicRefs(m, g.Topics, func(t *kmsg.OffsetFetchResponseGroupTopic) (*string, *[16]byte) { return &t.Topic, &t.TopicID })
	}
	return nil
}

func upOffsetDelete(_ context.Context, m *Mapper, r *kmsg.OffsetDeleteRequest) error {
	r.Group = m.UpGroup(r.Group)
	upTopics(m, r.Topics, func(t *kmsg.OffsetDeleteRequestTopic) *string { return &t.Topic })
	return nil
}

func downOffsetDelete(m *Mapper, _ *kmsg.OffsetDeleteRequest, resp *kmsg.OffsetDeleteResponse) error {
	resp.Topics = keepMapped(resp.Topics, func(t *kmsg.OffsetDeleteResponseTopic) *string { return &t.Topic }, m.DownTopic)
	return nil
}
