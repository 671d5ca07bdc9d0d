package policy

import (
	"fmt"
	"reflect"

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

// checkRegexSubscription refuses a non-empty regex subscription (in the
// request field named field) unless the principal may describe every topic.
func (c *reqCtx) checkRegexSubscription(field string, regex *string) *denial {
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
		"kproxy policy: %s refused: %s may not describe every topic, and the broker resolves the regex over all of them; subscribe by topic names", field, c.prin)}
}

// groupHeartbeat enforces a KIP-848 or KIP-932 heartbeat req, whose answer
// is R: Read on the group, Describe on each subscribed topic name and, for
// a regex subscription, on every topic, with the top-level error Kafka
// uses. The answer's assignment is checked by refuseHiddenAssignment.
func groupHeartbeat[R kmsg.Response](c *reqCtx, req kmsg.Request, group string, names []string, regex *string) filter.Verdict {
	if d := c.check(OpRead, ResGroup, group); d != nil {
		return denyTopLevel(req, d)
	}
	if d := checkTopicsDescribe(c, OpDescribe, names); d != nil {
		return denyTopLevel(req, d)
	}
	if d := c.checkRegexSubscription("SubscribedTopicRegex", regex); d != nil {
		return denyTopLevel(req, d)
	}
	return filter.Verdict{OnResponse: filter.Then(func(resp R) error {
		c.refuseHiddenAssignment(resp)
		return nil
	})}
}

// refuseHiddenAssignment answers a heartbeat whose assignment names a
// topic the principal may not describe (assignsHiddenTopic) with
// TOPIC_AUTHORIZATION_FAILED, and no assignment, member id or epoch. resp
// is a ConsumerGroupHeartbeat or ShareGroupHeartbeat response, which name
// those fields alike.
func (c *reqCtx) refuseHiddenAssignment(resp kmsg.Response) {
	v := reflect.ValueOf(resp).Elem()
	if v.FieldByName("ErrorCode").Int() != 0 || !c.assignsHiddenTopic(v.FieldByName("Assignment").Interface()) {
		return
	}
	setTopLevelError(resp, &denial{code: errTopicAuthorizationFailed, msg: "kproxy policy: the assignment names topics this principal may not describe"})
	for _, field := range []string{"Assignment", "MemberID", "MemberEpoch"} {
		v.FieldByName(field).SetZero()
	}
}
