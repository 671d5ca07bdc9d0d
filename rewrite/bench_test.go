package rewrite

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkMetadataRewrite measures what the proxy pays per Metadata
// response: decode, rewrite, encode, for a 3-broker, 50-topic cluster at the
// newest version. The output buffer is reused across iterations as the
// engine would reuse its write buffer.
func BenchmarkMetadataRewrite(b *testing.B) {
	src := buildMetadata().(*kmsg.MetadataResponse)
	src.Topics = nil
	for i := range 50 {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic = strp(fmt.Sprintf("topic-%02d", i))
		for p := range int32(6) {
			part := kmsg.NewMetadataResponseTopicPartition()
			part.Partition, part.Leader = p, testNodes[int(p)%len(testNodes)]
			part.Replicas, part.ISR = testNodes, testNodes
			t.Partitions = append(t.Partitions, part)
		}
		src.Topics = append(src.Topics, t)
	}
	version := src.MaxVersion()
	src.SetVersion(version)
	in := src.AppendTo(nil)

	filter := Addresses{Mapper: constMapper{}}
	out := make([]byte, 0, 2*len(in))
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		resp := kmsg.NewPtrMetadataResponse()
		resp.SetVersion(version)
		if err := resp.ReadFrom(in); err != nil {
			b.Fatal(err)
		}
		if err := filter.FilterResponse(resp); err != nil {
			b.Fatal(err)
		}
		out = resp.AppendTo(out[:0])
	}
}
