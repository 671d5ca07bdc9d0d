package wire

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// codes keeps the error codes a walk hands it.
type codes []int16

func (c *codes) NoteError(code int16) { *c = append(*c, code) }

// TestResponseErrorCodes walks Produce and Fetch bodies of every flexible
// version whose partitions (and, for Fetch, the response) carry error
// codes, and checks each non-zero code is handed over once, in order; a
// version before the flexible encoding has no walk and hands nothing.
func TestResponseErrorCodes(t *testing.T) {
	const notLeader, fenced, sessionGone = 6, 74, 70
	apis := APIs()
	for _, key := range []int16{ProduceKey, FetchKey} {
		api, _ := apis.API(key)
		for v := int16(0); v <= MaxVersion(key); v++ {
			var body []byte
			want := []int16{notLeader, fenced}
			switch key {
			case ProduceKey:
				resp := kmsg.NewPtrProduceResponse()
				resp.SetVersion(v)
				topic := kmsg.NewProduceResponseTopic()
				for _, code := range []int16{0, notLeader, fenced} {
					p := kmsg.NewProduceResponseTopicPartition()
					p.ErrorCode = code
					topic.Partitions = append(topic.Partitions, p)
				}
				resp.Topics = append(resp.Topics, topic)
				body = resp.AppendTo(nil)
			case FetchKey:
				resp := kmsg.NewPtrFetchResponse()
				resp.SetVersion(v)
				resp.ErrorCode = sessionGone
				topic := kmsg.NewFetchResponseTopic()
				for _, code := range []int16{0, notLeader, fenced} {
					p := kmsg.NewFetchResponseTopicPartition()
					p.ErrorCode, p.RecordBatches = code, []byte("records are skipped")
					topic.Partitions = append(topic.Partitions, p)
				}
				resp.Topics = append(resp.Topics, topic)
				body = resp.AppendTo(nil)
				want = []int16{sessionGone, notLeader, fenced}
			}
			if !IsFlexible(key, v) {
				want = nil
			}
			var got codes
			var w ErrorWalker
			if err := w.ResponseErrorCodes(api, v, body, &got); err != nil {
				t.Fatalf("%s v%d: %v", APIName(key), v, err)
			}
			if !slices.Equal([]int16(got), want) {
				t.Errorf("%s v%d: error codes %v, want %v", APIName(key), v, got, want)
			}
		}
	}
}
