package policy

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// Share sessions (KIP-932) under a policy.
//
// A ShareFetch names only the partitions it adds to the member's share
// session; the broker acquires and returns records of every partition in
// the session, which is keyed by group and member id alone, so nothing
// ties it to the principal on this connection (a member id is shown by
// ShareGroupDescribe). Unlike Fetch, ShareFetch has no sessionless form, so
// kproxy checks the response instead: every topic it carries that the
// request did not name is decided (Read) under the request's policy. If
// any is denied, the whole answer is replaced by SHARE_SESSION_NOT_FOUND
// with no records: franz-go and Kafka's Java client then open a new share
// session (epoch 0) listing every partition they want, which is decided
// afresh. The records the broker acquired for that answer are released
// when their acquisition lock times out, as for a consumer that died.
//
// ShareAcknowledge returns no records and acknowledges only the topics it
// names, which are decided at the request: it needs nothing here.

// checkShareFetchResponse returns the OnResponse hook of an allowed
// ShareFetch r: it refuses a response that carries a topic r did not name
// and the principal may not read. r is the decoded request, which the
// engine keeps for the hook.
func (c *reqCtx) checkShareFetchResponse(r *kmsg.ShareFetchRequest) func(kmsg.Response) error {
	return filter.Then(func(sr *kmsg.ShareFetchResponse) error {
		if d := c.unnamedShareTopicDenial(r, sr); d != nil {
			sr.ErrorCode = kerr.ShareSessionNotFound.Code
			msg := "kproxy policy: the share session holds a partition this principal may not read; open a new share session"
			sr.ErrorMessage = &msg
			sr.Topics = nil
			sr.NodeEndpoints = nil
		}
		return nil
	})
}

// unnamedShareTopicDenial decides Read on each topic of sr that r did not
// name and returns the first denial (nil in audit mode, where each
// would-be denial is only logged).
func (c *reqCtx) unnamedShareTopicDenial(r *kmsg.ShareFetchRequest, sr *kmsg.ShareFetchResponse) *denial {
	var first *denial
	for i := range sr.Topics {
		id := sr.Topics[i].TopicID
		if shareRequestNames(r, id) {
			continue
		}
		var d *denial
		if name, ok := c.topicName("", id); ok {
			d = c.check(OpRead, ResTopic, name)
		} else {
			d = c.unknownTopic(id)
		}
		if first == nil {
			first = d
		}
	}
	return first
}

// shareRequestNames reports whether r lists topic id, so that its Read was
// decided at the request.
func shareRequestNames(r *kmsg.ShareFetchRequest, id [16]byte) bool {
	for i := range r.Topics {
		if r.Topics[i].TopicID == id {
			return true
		}
	}
	return false
}
