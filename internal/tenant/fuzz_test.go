package tenant

import (
	"bytes"
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// message is what kmsg requests and responses have in common.
type message interface {
	MaxVersion() int16
	SetVersion(int16)
	AppendTo([]byte) []byte
}

// fuzzSeeds adds the encodings of a filled message at every version.
func fuzzSeeds(f *testing.F, newMsg func() message) {
	for v := int16(0); v <= newMsg().MaxVersion(); v++ {
		msg := newMsg()
		msg.SetVersion(v)
		f.Add(v, msg.AppendTo(nil))
	}
}

// The raw Produce request mapping never panics, refuses what it cannot
// walk, and, for a body kmsg decodes and re-encodes to the same bytes,
// produces exactly the decoded mapping's encoding.
func FuzzRawProduceRequest(f *testing.F) {
	fuzzSeeds(f, func() message {
		r := kmsg.NewPtrProduceRequest()
		r.TransactionID = kmsg.StringPtr("tx")
		t := kmsg.NewProduceRequestTopic()
		t.Topic, t.TopicID = "orders", [16]byte{1}
		t.Partitions = append(t.Partitions, kmsg.ProduceRequestTopicPartition{Records: []byte("batch")})
		r.Topics = append(r.Topics, t)
		return r
	})
	fuzzRawRequest(f, kmsg.Produce)
}

// FuzzRawFetchResponse is FuzzRawProduceRequest for Fetch v0-12 responses.
func FuzzRawFetchResponse(f *testing.F) {
	fuzzSeeds(f, func() message {
		r := kmsg.NewPtrFetchResponse()
		t := kmsg.NewFetchResponseTopic()
		t.Topic = "team-a.orders"
		p := kmsg.NewFetchResponseTopicPartition()
		p.RecordBatches = []byte("batch")
		p.AbortedTransactions = append(p.AbortedTransactions, kmsg.NewFetchResponseTopicPartitionAbortedTransaction())
		t.Partitions = append(t.Partitions, p)
		r.Topics = append(r.Topics, t)
		return r
	})
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		if version < 0 || version > 12 {
			return
		}
		m := New(teamANames)
		raw, rawErr := m.MapRawResponse(int16(kmsg.Fetch), version, body, nil)
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(version)
		if resp.ReadFrom(body) != nil || !bytes.Equal(resp.AppendTo(nil), body) {
			return
		}
		for _, topic := range resp.Topics {
			if _, ok := m.DownTopic(topic.Topic); !ok {
				if rawErr == nil {
					t.Fatalf("v%d: a response naming %q, not the tenant's, was mapped", version, topic.Topic)
				}
				return
			}
		}
		if rawErr != nil {
			t.Fatalf("v%d: raw mapping refused a body kmsg decodes: %v", version, rawErr)
		}
		if raw == nil { // no change
			raw = body
		}
		if err := m.MapResponse(nil, resp); err != nil {
			t.Fatal(err)
		}
		if want := resp.AppendTo(nil); !bytes.Equal(raw, want) {
			t.Fatalf("v%d: raw %x, decoded %x", version, raw, want)
		}
	})
}

// FuzzRawFetchRequest is FuzzRawProduceRequest for Fetch requests.
func FuzzRawFetchRequest(f *testing.F) {
	fuzzSeeds(f, func() message {
		r := kmsg.NewPtrFetchRequest()
		t := kmsg.NewFetchRequestTopic()
		t.Topic, t.TopicID = "orders", [16]byte{1}
		t.Partitions = append(t.Partitions, kmsg.NewFetchRequestTopicPartition())
		r.Topics = append(r.Topics, t)
		ft := kmsg.NewFetchRequestForgottenTopic()
		ft.Topic, ft.TopicID, ft.Partitions = "old", [16]byte{2}, []int32{0, 1}
		r.ForgottenTopics = append(r.ForgottenTopics, ft)
		r.Rack = "rack"
		return r
	})
	fuzzRawRequest(f, kmsg.Fetch)
}

// fuzzRawRequest checks a raw request mapping of key against kmsg: it
// never panics, and for a body kmsg decodes and re-encodes to the same
// bytes it maps exactly as the decoded mapping does.
func fuzzRawRequest(f *testing.F, key kmsg.Key) {
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		req := kmsg.RequestForKey(int16(key))
		if version < 0 || version > req.MaxVersion() {
			return
		}
		m := New(teamANames)
		ctx := context.Background()
		raw, _, rawErr := m.MapRawRequest(ctx, int16(key), version, body, nil)
		req.SetVersion(version)
		if req.ReadFrom(body) != nil || !bytes.Equal(req.AppendTo(nil), body) {
			return
		}
		if rawErr != nil {
			t.Fatalf("v%d: raw mapping refused a body kmsg decodes: %v", version, rawErr)
		}
		if raw == nil { // no change
			raw = body
		}
		if _, err := m.MapRequest(ctx, req); err != nil {
			t.Fatal(err)
		}
		if want := req.AppendTo(nil); !bytes.Equal(raw, want) {
			t.Fatalf("v%d: raw %x, decoded %x", version, raw, want)
		}
	})
}
