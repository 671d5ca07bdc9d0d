package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// describedClassicGroupTopics applies to DescribeGroups what the KIP-848
// group describes get: members of a classic "consumer" group carry their
// subscription and assignment as consumer-protocol bytes, which name
// topics. A group whose members name a topic the principal may not
// describe (or whose bytes kproxy cannot read) is answered
// TOPIC_AUTHORIZATION_FAILED with nothing but its id. Other protocol types
// (Connect, Streams' classic rebalances) carry no topic names kproxy can
// know of and pass.
func describedClassicGroupTopics(c *reqCtx, v filter.Verdict) filter.Verdict {
	return afterResponse(v, filter.Then(func(dr *kmsg.DescribeGroupsResponse) error {
		for i := range dr.Groups {
			g := &dr.Groups[i]
			if g.ErrorCode != 0 || g.ProtocolType != "consumer" || !c.consumerMembersNameHiddenTopics(g.Members) {
				continue
			}
			h := kmsg.NewDescribeGroupsResponseGroup()
			h.Group, h.ErrorCode, h.ErrorMessage = g.Group, errTopicAuthorizationFailed, kmsg.StringPtr(hiddenTopicsInGroup)
			*g = h
		}
		return nil
	}))
}

func (c *reqCtx) consumerMembersNameHiddenTopics(members []kmsg.DescribeGroupsResponseGroupMember) bool {
	for _, m := range members {
		if len(m.ProtocolMetadata) > 0 {
			var md kmsg.ConsumerMemberMetadata
			if md.ReadFrom(m.ProtocolMetadata) != nil || c.namesHiddenTopic(&md) {
				return true
			}
		}
		if len(m.MemberAssignment) > 0 {
			var a kmsg.ConsumerMemberAssignment
			if a.ReadFrom(m.MemberAssignment) != nil || c.namesHiddenTopic(&a) {
				return true
			}
		}
	}
	return false
}

// describeShareGroupAllTopics leaves out, of a group asked for with all
// its topics (no topic list), the topics the principal may not describe.
func describeShareGroupAllTopics(c *reqCtx, r *kmsg.DescribeShareGroupOffsetsRequest, v filter.Verdict) filter.Verdict {
	allTopics := map[string]bool{}
	for _, g := range r.Groups {
		if g.Topics == nil {
			allTopics[g.GroupID] = true
		}
	}
	if len(allTopics) == 0 {
		return v
	}
	return afterResponse(v, filter.Then(func(dr *kmsg.DescribeShareGroupOffsetsResponse) error {
		for i := range dr.Groups {
			g := &dr.Groups[i]
			if !allTopics[g.GroupID] {
				continue
			}
			g.Topics = keepOnly(g.Topics, func(t kmsg.DescribeShareGroupOffsetsResponseGroupTopic) bool {
				name, known := c.topicName(t.Topic, t.TopicID)
				return known && c.visible(OpDescribe, ResTopic, name)
			})
		}
		return nil
	}))
}
