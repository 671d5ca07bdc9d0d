package tenant

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerGroupAPIs maps the KIP-848 consumer group APIs.
func consumerGroupAPIs() []api {
	return []api{
		typedEntry(kmsg.ConsumerGroupHeartbeat.Int16(), upConsumerGroupHeartbeat, downConsumerGroupHeartbeat,
			"req.Group", "req.SubscribedTopicNames", "req.SubscribedTopicRegex", "req.Topics.TopicID",
			"resp.Assignment.Topics.TopicID"),
		typedEntry(kmsg.ConsumerGroupDescribe.Int16(),
			func(_ context.Context, m *Mapper, r *kmsg.ConsumerGroupDescribeRequest) error {
				upEach(r.Groups, m.UpGroup)
				return nil
			},
			downConsumerGroupDescribe,
			"req.Groups", "resp.Groups.Group", "resp.Groups.Members.SubscribedTopics", "resp.Groups.Members.SubscribedTopicRegex",
			"resp.Groups.Members.Assignment.TopicPartitions.Topic", "resp.Groups.Members.Assignment.TopicPartitions.TopicID",
			"resp.Groups.Members.TargetAssignment.TopicPartitions.Topic", "resp.Groups.Members.TargetAssignment.TopicPartitions.TopicID"),
	}
}

func upConsumerGroupHeartbeat(ctx context.Context, m *Mapper, r *kmsg.ConsumerGroupHeartbeatRequest) error {
	r.Group = m.UpGroup(r.Group)
	upEach(r.SubscribedTopicNames, m.UpTopic)
	if r.SubscribedTopicRegex != nil && *r.SubscribedTopicRegex != "" {
		up, err := upRegex(m.names.Topic, *r.SubscribedTopicRegex)
		if err != nil {
			resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
			resp.Version, resp.ErrorCode = r.Version, kerr.InvalidRegularExpression.Code
			resp.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("kproxy: SubscribedTopicRegex: %v", err))
			return &Answer{Response: resp}
		}
		r.SubscribedTopicRegex = &up
	}
	for i := range r.Topics {
		r.Topics[i].TopicID = m.UpTopicID(ctx, r.Topics[i].TopicID)
	}
	return nil
}

func downConsumerGroupHeartbeat(m *Mapper, _ *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse) error {
	m.DownMessage(resp.ErrorMessage)
	if resp.Assignment != nil {
		for i := range resp.Assignment.Topics {
			resp.Assignment.Topics[i].TopicID = m.DownTopicID(resp.Assignment.Topics[i].TopicID)
		}
	}
	return nil
}

func downConsumerGroupDescribe(m *Mapper, _ *kmsg.ConsumerGroupDescribeRequest, resp *kmsg.ConsumerGroupDescribeResponse) error {
	resp.Groups = downGroups(m, resp.Groups,
		func(g *kmsg.ConsumerGroupDescribeResponseGroup) (*string, *string) { return &g.Group, g.ErrorMessage },
		func(g *kmsg.ConsumerGroupDescribeResponseGroup) {
			for j := range g.Members {
				mb := &g.Members[j]
				mb.SubscribedTopics = downNames(mb.SubscribedTopics, m.DownTopic)
				downPtr(&mb.SubscribedTopicRegex, func(re string) (string, bool) { return downRegex(m.names.Topic, re) })
				downAssignment(m, &mb.Assignment)
				downAssignment(m, &mb.TargetAssignment)
			}
		})
	return nil
}

// downAssignment maps a described member's assignment (kmsg.Assignment:
// topic id and name), leaving out topics that are not the tenant's.
func downAssignment(m *Mapper, a *kmsg.Assignment) {
	a.TopicPartitions = keepTopicRefs(m, a.TopicPartitions, func(t *kmsg.AssignmentTopicPartition) (*string, *[16]byte) { return &t.Topic, &t.TopicID })
}
