package policy

import (
	"fmt"
	"testing"

	"github.com/kproxy/kproxy/protocol"
)

// BenchmarkSessionlessFetch is the request-side cost of carrying a
// consumer Fetch sessionless: deciding it and, when the client asked for a
// session (epoch 0, as Kafka's Java client does on every full fetch), the
// re-encode that the engine then does. Fetch responses are unchanged and
// still streamed.
func BenchmarkSessionlessFetch(b *testing.B) {
	enf := newTestEnforcer(b, readPolicy, nil)
	for _, partitions := range []int{16, 1000} {
		topics := make([]string, partitions/16)
		for i := range topics {
			topics[i] = fmt.Sprintf("pub.t%d", i)
		}
		for _, epoch := range []int32{-1, 0} {
			b.Run(fmt.Sprintf("partitions=%d/epoch=%d", partitions, epoch), func(b *testing.B) {
				req := fetchReq(12, 0, epoch, topics...)
				for i := range req.Topics {
					p := req.Topics[i].Partitions[0]
					req.Topics[i].Partitions = nil
					for j := range int32(16) {
						p.Partition = j
						req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
					}
				}
				var frame []byte
				fetch := handlersOf(enf)[req.Key()]
				b.ReportAllocs()
				for b.Loop() {
					req.SessionEpoch = epoch
					v := fetch.Handle(testConn, req)
					if v.Respond != nil {
						b.Fatal("answered locally")
					}
					if v.Modified {
						frame = protocol.AppendRequestFrame(frame[:0], protocol.RequestHeader{ClientID: "bench"}, req)
					}
				}
			})
		}
	}
}
