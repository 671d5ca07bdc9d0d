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

// assignedTopicsCheck is the response hook that answers a heartbeat whose
// assignment names a topic the principal may not describe with
// TOPIC_AUTHORIZATION_FAILED. Ids kproxy cannot name pass: the member's
// topics were authorized by name when it subscribed.
func (c *reqCtx) assignedTopicsCheck(assignment func(kmsg.Response) ([][16]byte, bool)) func(kmsg.Response) error {
	return func(resp kmsg.Response) error {
		ids, ok := assignment(resp)
		if !ok {
			return errWrongResponse(resp)
		}
		for _, id := range ids {
			if name, known := c.topicName("", id); known && !c.visible(OpDescribe, ResTopic, name) {
				setTopLevelError(resp, &denial{code: errTopicAuthorizationFailed, msg: "kproxy policy: the assignment names topics this principal may not describe"})
				clearAssignment(resp)
				return nil
			}
		}
		return nil
	}
}

func clearAssignment(resp kmsg.Response) {
	switch r := resp.(type) {
	case *kmsg.ConsumerGroupHeartbeatResponse:
		r.Assignment, r.MemberID, r.MemberEpoch = nil, nil, 0
	case *kmsg.ShareGroupHeartbeatResponse:
		r.Assignment, r.MemberID, r.MemberEpoch = nil, nil, 0
	}
}

func consumerAssignment(resp kmsg.Response) ([][16]byte, bool) {
	hr, ok := resp.(*kmsg.ConsumerGroupHeartbeatResponse)
	if !ok {
		return nil, false
	}
	if hr.ErrorCode != 0 || hr.Assignment == nil {
		return nil, true
	}
	ids := make([][16]byte, len(hr.Assignment.Topics))
	for i, t := range hr.Assignment.Topics {
		ids[i] = t.TopicID
	}
	return ids, true
}

func shareAssignment(resp kmsg.Response) ([][16]byte, bool) {
	hr, ok := resp.(*kmsg.ShareGroupHeartbeatResponse)
	if !ok {
		return nil, false
	}
	if hr.ErrorCode != 0 || hr.Assignment == nil {
		return nil, true
	}
	ids := make([][16]byte, len(hr.Assignment.TopicPartitions))
	for i, t := range hr.Assignment.TopicPartitions {
		ids[i] = t.TopicID
	}
	return ids, true
}

// heartbeatVerdict forwards an authorized heartbeat with the assignment
// check.
func (c *reqCtx) heartbeatVerdict(assignment func(kmsg.Response) ([][16]byte, bool)) filter.Verdict {
	return filter.Verdict{OnResponse: c.assignedTopicsCheck(assignment)}
}
