package policy

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// A KIP-848 member subscribing with SubscribedTopicRegex lets the broker
// choose its topics. Kafka resolves the regex over the topics the member
// may describe (KAFKA-18813); the broker behind kproxy resolves it over
// everything kproxy's own identity sees, and assigns the member partitions
// (and ids) of topics the principal may not describe. A proxy cannot
// narrow the regex (RE2 has no intersection) and must not strip a
// broker's assignment (the stripped partitions would stay assigned to a
// member that never consumes them, and the group would stall). So kproxy
// refuses a regex subscription from a principal that may not describe
// every topic, with TOPIC_AUTHORIZATION_FAILED and a message that says
// to subscribe by name; the answer depends on the policy only, never on
// which topics exist. Whatever the subscription, an assignment that names
// a topic the principal may not describe (a policy reloaded under a
// running member) is answered TOPIC_AUTHORIZATION_FAILED instead.

// checkRegexSubscription refuses a non-empty regex subscription unless the
// principal may describe every topic.
func (c *reqCtx) checkRegexSubscription(regex *string) *denial {
	if regex == nil || *regex == "" {
		return nil
	}
	if c.forced != nil {
		return c.forced
	}
	d := c.subj.DecideEvery(OpDescribe, ResTopic)
	if c.record(OpDescribe, ResTopic, "*", d) == nil {
		return nil
	}
	return &denial{code: errTopicAuthorizationFailed, msg: fmt.Sprintf(
		"kproxy policy: SubscribedTopicRegex refused: %s may not describe every topic, and the broker resolves the regex over all of them; subscribe by topic names", c.prin)}
}

// heartbeatVerdict forwards an authorized heartbeat with the response hook
// that answers one whose assignment names a topic the principal may not
// describe with TOPIC_AUTHORIZATION_FAILED, and no assignment. assigned
// lists the assignment's topic ids (none for an error answer or no
// assignment); drop removes it. Ids kproxy cannot name pass: the member's
// topics were authorized by name when it subscribed.
func heartbeatVerdict[R kmsg.Response](c *reqCtx, assigned func(R) [][16]byte, drop func(R)) filter.Verdict {
	return filter.Verdict{OnResponse: filter.Then(func(resp R) error {
		for _, id := range assigned(resp) {
			if name, known := c.topicName("", id); known && !c.visible(OpDescribe, ResTopic, name) {
				setTopLevelError(resp, &denial{code: errTopicAuthorizationFailed, msg: "kproxy policy: the assignment names topics this principal may not describe"})
				drop(resp)
				return nil
			}
		}
		return nil
	})}
}

func consumerAssignment(hr *kmsg.ConsumerGroupHeartbeatResponse) [][16]byte {
	if hr.ErrorCode != 0 || hr.Assignment == nil {
		return nil
	}
	ids := make([][16]byte, len(hr.Assignment.Topics))
	for i, t := range hr.Assignment.Topics {
		ids[i] = t.TopicID
	}
	return ids
}

func dropConsumerAssignment(hr *kmsg.ConsumerGroupHeartbeatResponse) {
	hr.Assignment, hr.MemberID, hr.MemberEpoch = nil, nil, 0
}

func shareAssignment(hr *kmsg.ShareGroupHeartbeatResponse) [][16]byte {
	if hr.ErrorCode != 0 || hr.Assignment == nil {
		return nil
	}
	ids := make([][16]byte, len(hr.Assignment.TopicPartitions))
	for i, t := range hr.Assignment.TopicPartitions {
		ids[i] = t.TopicID
	}
	return ids
}

func dropShareAssignment(hr *kmsg.ShareGroupHeartbeatResponse) {
	hr.Assignment, hr.MemberID, hr.MemberEpoch = nil, nil, 0
}
