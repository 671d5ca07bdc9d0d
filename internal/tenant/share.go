package tenant

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareGroupAPIs maps the share group APIs (KIP-932) clients send.
func shareGroupAPIs() []api {
	return []api{
		typedEntry(kmsg.ShareGroupHeartbeat.Int16(),
			func(_ context.Context, m *Mapper, r *kmsg.ShareGroupHeartbeatRequest) error {
				r.GroupID = m.UpGroup(r.GroupID)
				upEach(r.SubscribedTopicNames, m.UpTopic)
				return nil
			},
			func(m *Mapper, _ *kmsg.ShareGroupHeartbeatRequest, resp *kmsg.ShareGroupHeartbeatResponse) error {
				m.DownMessage(resp.ErrorMessage)
				if resp.Assignment != nil {
					for i := range resp.Assignment.TopicPartitions {
						resp.Assignment.TopicPartitions[i].TopicID = m.DownTopicID(resp.Assignment.TopicPartitions[i].TopicID)
					}
				}
				return nil
			},
			"req.GroupID", "req.SubscribedTopicNames", "resp.Assignment.TopicPartitions.TopicID"),
		typedEntry(kmsg.ShareGroupDescribe.Int16(),
			func(_ context.Context, m *Mapper, r *kmsg.ShareGroupDescribeRequest) error {
				upEach(r.GroupIDs, m.UpGroup)
				return nil
			},
			downShareGroupDescribe,
			"req.GroupIDs", "resp.Groups.GroupID", "resp.Groups.Members.SubscribedTopicNames",
			"resp.Groups.Members.Assignment.TopicPartitions.Topic", "resp.Groups.Members.Assignment.TopicPartitions.TopicID"),
		typedEntry(kmsg.ShareFetch.Int16(), upShareFetch, downShareFetch,
			"req.GroupID", "req.Topics.TopicID", "req.ForgottenTopicsData.TopicID", "resp.Topics.TopicID"),
		typedEntry(kmsg.ShareAcknowledge.Int16(),
			func(ctx context.Context, m *Mapper, r *kmsg.ShareAcknowledgeRequest) error {
				upPtr(r.GroupID, m.UpGroup)
				for i := range r.Topics {
					r.Topics[i].TopicID = m.UpTopicID(ctx, r.Topics[i].TopicID)
				}
				return nil
			},
			func(m *Mapper, _ *kmsg.ShareAcknowledgeRequest, resp *kmsg.ShareAcknowledgeResponse) error {
				m.DownMessage(resp.ErrorMessage)
				for i := range resp.Topics {
					t := &resp.Topics[i]
					t.TopicID = m.DownTopicID(t.TopicID)
					for j := range t.Partitions {
						m.DownMessage(t.Partitions[j].ErrorMessage)
					}
				}
				return nil
			},
			"req.GroupID", "req.Topics.TopicID", "resp.Topics.TopicID"),
		typedEntry(kmsg.DescribeShareGroupOffsets.Int16(), upDescribeShareGroupOffsets, downDescribeShareGroupOffsets,
			"req.Groups.GroupID", "req.Groups.Topics.Topic", "resp.Groups.GroupID", "resp.Groups.Topics.Topic", "resp.Groups.Topics.TopicID"),
		typedEntry(kmsg.AlterShareGroupOffsets.Int16(),
			func(_ context.Context, m *Mapper, r *kmsg.AlterShareGroupOffsetsRequest) error {
				r.GroupID = m.UpGroup(r.GroupID)
				upTopics(m, r.Topics, func(t *kmsg.AlterShareGroupOffsetsRequestTopic) *string { return &t.Topic })
				return nil
			},
			func(m *Mapper, _ *kmsg.AlterShareGroupOffsetsRequest, resp *kmsg.AlterShareGroupOffsetsResponse) error {
				m.DownMessage(resp.ErrorMessage)
				resp.Topics = keepTopicRefs(m, resp.Topics, func(t *kmsg.AlterShareGroupOffsetsResponseTopic) (*string, *[16]byte) { return &t.Topic, &t.TopicID })
				for i := range resp.Topics {
					for j := range resp.Topics[i].Partitions {
						m.DownMessage(resp.Topics[i].Partitions[j].ErrorMessage)
					}
				}
				return nil
			},
			"req.GroupID", "req.Topics.Topic", "resp.Topics.Topic", "resp.Topics.TopicID"),
		typedEntry(kmsg.DeleteShareGroupOffsets.Int16(),
			func(_ context.Context, m *Mapper, r *kmsg.DeleteShareGroupOffsetsRequest) error {
				r.GroupID = m.UpGroup(r.GroupID)
				upTopics(m, r.Topics, func(t *kmsg.DeleteShareGroupOffsetsRequestTopic) *string { return &t.Topic })
				return nil
			},
			func(m *Mapper, _ *kmsg.DeleteShareGroupOffsetsRequest, resp *kmsg.DeleteShareGroupOffsetsResponse) error {
				m.DownMessage(resp.ErrorMessage)
				resp.Topics = keepTopicRefs(m, resp.Topics, func(t *kmsg.DeleteShareGroupOffsetsResponseTopic) (*string, *[16]byte) { return &t.Topic, &t.TopicID })
				for i := range resp.Topics {
					m.DownMessage(resp.Topics[i].ErrorMessage)
				}
				return nil
			},
			"req.GroupID", "req.Topics.Topic", "resp.Topics.Topic", "resp.Topics.TopicID"),
	}
}

func downShareGroupDescribe(m *Mapper, _ *kmsg.ShareGroupDescribeRequest, resp *kmsg.ShareGroupDescribeResponse) error {
	resp.Groups = downGroups(m, resp.Groups,
		func(g *kmsg.ShareGroupDescribeResponseGroup) (*string, *string) { return &g.GroupID, g.ErrorMessage },
		func(g *kmsg.ShareGroupDescribeResponseGroup) {
			for j := range g.Members {
				mb := &g.Members[j]
				mb.SubscribedTopicNames = downNames(mb.SubscribedTopicNames, m.DownTopic)
				mb.Assignment.TopicPartitions = keepTopicRefs(m, mb.Assignment.TopicPartitions,
					func(t *kmsg.ShareGroupDescribeResponseGroupMemberAssignmentTopicPartition) (*string, *[16]byte) {
						return &t.Topic, &t.TopicID
					})
			}
		})
	return nil
}

func upShareFetch(ctx context.Context, m *Mapper, r *kmsg.ShareFetchRequest) error {
	upPtr(r.GroupID, m.UpGroup)
	for i := range r.Topics {
		r.Topics[i].TopicID = m.UpTopicID(ctx, r.Topics[i].TopicID)
	}
	for i := range r.ForgottenTopicsData {
		r.ForgottenTopicsData[i].TopicID = m.UpTopicID(ctx, r.ForgottenTopicsData[i].TopicID)
	}
	return nil
}

func downShareFetch(m *Mapper, _ *kmsg.ShareFetchRequest, resp *kmsg.ShareFetchResponse) error {
	m.DownMessage(resp.ErrorMessage)
	for i := range resp.Topics {
		t := &resp.Topics[i]
		t.TopicID = m.DownTopicID(t.TopicID)
		for j := range t.Partitions {
			m.DownMessage(t.Partitions[j].ErrorMessage)
			m.DownMessage(t.Partitions[j].AcknowledgeErrorMessage)
		}
	}
	return nil
}

func upDescribeShareGroupOffsets(_ context.Context, m *Mapper, r *kmsg.DescribeShareGroupOffsetsRequest) error {
	for i := range r.Groups {
		g := &r.Groups[i]
		g.GroupID = m.UpGroup(g.GroupID)
		upTopics(m, g.Topics, func(t *kmsg.DescribeShareGroupOffsetsRequestGroupTopic) *string { return &t.Topic })
	}
	return nil
}

// downDescribeShareGroupOffsets also hides, of a group asked for with all
// its topics, any topic that is not the tenant's.
func downDescribeShareGroupOffsets(m *Mapper, _ *kmsg.DescribeShareGroupOffsetsRequest, resp *kmsg.DescribeShareGroupOffsetsResponse) error {
	resp.Groups = downGroups(m, resp.Groups,
		func(g *kmsg.DescribeShareGroupOffsetsResponseGroup) (*string, *string) {
			return &g.GroupID, g.ErrorMessage
		},
		func(g *kmsg.DescribeShareGroupOffsetsResponseGroup) {
			g.Topics = keepTopicRefs(m, g.Topics, func(t *kmsg.DescribeShareGroupOffsetsResponseGroupTopic) (*string, *[16]byte) {
				return &t.Topic, &t.TopicID
			})
			for j := range g.Topics {
				for k := range g.Topics[j].Partitions {
					m.DownMessage(g.Topics[j].Partitions[k].ErrorMessage)
				}
			}
		})
	return nil
}
