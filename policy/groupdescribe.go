package policy

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// hiddenTopicsInGroup is the message of a described group answered
// TOPIC_AUTHORIZATION_FAILED: it names no topic.
const hiddenTopicsInGroup = "kproxy policy: the group's members subscribe to or are assigned topics this principal may not describe"

// Describing a group (ConsumerGroupDescribe, ShareGroupDescribe,
// StreamsGroupDescribe) shows every member's subscription and assignment,
// topic names and ids included, whoever the member is. Kafka 4.0
// (KAFKA-18813, KAFKA-18819) answers a group that names any topic the
// principal may not describe with TOPIC_AUTHORIZATION_FAILED and nothing
// else about it; kproxy does the same, counting every topic the group's
// description names (subscriptions, assignments, target assignments,
// topologies: whatever topicRefs finds).

// hideGroupsNamingHiddenTopics makes v answer each described group (T,
// naming itself in the string field nameField) of a response whose groups
// are listed by groups, that names a topic the principal may not describe,
// with TOPIC_AUTHORIZATION_FAILED and nothing else about it.
func hideGroupsNamingHiddenTopics[R kmsg.Response, T any](c *reqCtx, v filter.Verdict, groups func(R) *[]T, nameField string) filter.Verdict {
	hidden := &denial{code: errTopicAuthorizationFailed, msg: hiddenTopicsInGroup}
	return afterResponse(v, filter.Then(func(resp R) error {
		list := *groups(resp)
		for i := range list {
			g := reflect.ValueOf(&list[i]).Elem()
			if g.FieldByName("ErrorCode").Int() == 0 && c.namesHiddenTopic(&list[i]) {
				list[i] = entryAnswering[T](nameField, g.FieldByName(nameField).String(), hidden)
			}
		}
		return nil
	}))
}

// afterResponse makes fn see the answer to a request after what v already
// does with it, whether the upstream or the policy answers.
func afterResponse(v filter.Verdict, fn func(kmsg.Response) error) filter.Verdict {
	switch {
	case v.Close != nil:
		return v
	case v.Respond != nil:
		if err := fn(v.Respond); err != nil {
			return filter.Verdict{Close: err}
		}
		return v
	}
	prev := v.OnResponse
	v.OnResponse = func(resp kmsg.Response) error {
		if prev != nil {
			if err := prev(resp); err != nil {
				return err
			}
		}
		return fn(resp)
	}
	return v
}
