package tenant

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fetch: requests are small and decoded; their names (before v13) get the
// prefix, their ids (v13+) are checked. Responses before v13 name topics
// and are rewritten raw, records untouched (fetchresp.go); from v13 they
// stay streamed unless the request carried an id that is not the
// tenant's.
func fetchAPI() api {
	return api{
		key: key(kmsg.Fetch),
		request: typedRequest(func(ctx context.Context, m *Mapper, r *kmsg.FetchRequest) (bool, error) {
			disguised := false
			up := func(name *string, id *[16]byte) {
				*name = m.UpTopic(*name)
				u := m.UpTopicID(ctx, *id)
				disguised = disguised || u != *id
				*id = u
			}
			for i := range r.Topics {
				up(&r.Topics[i].Topic, &r.Topics[i].TopicID)
			}
			for i := range r.ForgottenTopics {
				up(&r.ForgottenTopics[i].Topic, &r.ForgottenTopics[i].TopicID)
			}
			return disguised, nil
		}),
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
