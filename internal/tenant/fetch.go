package tenant

import "github.com/twmb/franz-go/pkg/kmsg"

// Fetch: requests are mapped raw (fetchreq.go); their names (before v13)
// get the prefix, their ids (v13+) are checked in place. Responses before v13 name topics
// and are rewritten raw, records untouched (fetchresp.go); from v13 they
// stay streamed unless the request carried an id that is not the
// tenant's.
func fetchAPI() api {
	return api{
		key: key(kmsg.Fetch),
		request: typedRequestCtx(func(c *mapCtx, r *kmsg.FetchRequest) {
			upTopicRefs(c, r.Topics, func(t *kmsg.FetchRequestTopic) (*string, *[16]byte) { return &t.Topic, &t.TopicID })
			upTopicRefs(c, r.ForgottenTopics, func(t *kmsg.FetchRequestForgottenTopic) (*string, *[16]byte) { return &t.Topic, &t.TopicID })
		}),
		rawRequest:    rawFetchRequest,
		rawRequestFor: func(int16) bool { return true },
		response: typedResponse(func(m *Mapper, r *kmsg.FetchResponse) error {
			r.Topics = downTopicsOrIDs(m, r.Version, r.Topics, func(t *kmsg.FetchResponseTopic) (*string, *[16]byte) { return &t.Topic, &t.TopicID })
			return nil
		}),
		rawResponse:      rawFetchResponse,
		rawResponseFor:   func(version int16) bool { return version < 13 },
		responseStreamed: func(version int16) bool { return version >= 13 },
		fields:           []string{"req.Topics.Topic", "req.Topics.TopicID", "req.ForgottenTopics.Topic", "req.ForgottenTopics.TopicID", "resp.Topics.Topic", "resp.Topics.TopicID"},
	}
}
