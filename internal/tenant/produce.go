package tenant

import "github.com/twmb/franz-go/pkg/kmsg"

// Produce: the transactional id and topic names get their prefixes (raw,
// without decoding the records: producereq.go); from v13 topics are ids,
// checked in place. Responses before v13 name topics and are mapped
// (decoded: they are small); from v13 they stay streamed unless the
// request carried an id that is not the tenant's.
func produceAPI() api {
	return api{
		key: key(kmsg.Produce),
		request: typedRequestCtx(func(c *mapCtx, r *kmsg.ProduceRequest) {
			r.TransactionID = c.m.upNullableTxnID(r.TransactionID)
			upTopicRefs(c, r.Topics, func(t *kmsg.ProduceRequestTopic) (*string, *[16]byte) { return &t.Topic, &t.TopicID })
		}),
		rawRequest:    rawProduceRequest,
		rawRequestFor: func(int16) bool { return true },
		response: typedResponse(func(m *Mapper, r *kmsg.ProduceResponse) error {
			r.Topics = downTopicsOrIDs(m, r.Version, r.Topics, func(t *kmsg.ProduceResponseTopic) (*string, *[16]byte) { return &t.Topic, &t.TopicID })
			for i := range r.Topics {
				for j := range r.Topics[i].Partitions {
					p := &r.Topics[i].Partitions[j]
					m.DownMessage(p.ErrorMessage)
					for k := range p.ErrorRecords {
						m.DownMessage(p.ErrorRecords[k].ErrorMessage)
					}
				}
			}
			return nil
		}),
		responseStreamed: func(version int16) bool { return version >= 13 },
		fields:           []string{"req.TransactionID", "req.Topics.Topic", "req.Topics.TopicID", "resp.Topics.Topic", "resp.Topics.TopicID"},
	}
}

// upNullableTxnID prefixes a nullable transactional id.
func (m *Mapper) upNullableTxnID(id *string) *string {
	if id == nil {
		return nil
	}
	s := m.UpTxnID(*id)
	return &s
}

// downTopicsOrIDs maps the topics of a response that names them by name
// before version 13 and by id from it (Produce, Fetch): names back to the
// tenant's (dropping any other), disguised ids back to the client's.
func downTopicsOrIDs[T any](m *Mapper, version int16, ts []T, ref func(*T) (*string, *[16]byte)) []T {
	if version < 13 {
		return downTopics(m, ts, func(t *T) *string { name, _ := ref(t); return name })
	}
	for i := range ts {
		_, id := ref(&ts[i])
		*id = m.DownTopicID(*id)
	}
	return ts
}
