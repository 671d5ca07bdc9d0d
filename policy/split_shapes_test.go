package policy

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestConfigSplitMergesInClientOrder: the config APIs' shared split
// forwards the allowed resources and answers the denied one in its place.
func TestConfigSplitMergesInClientOrder(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  rules:
    - {name: g, principals: ["*"], allow: [describe_configs], topics: ["pub-*"]}
`, nil)
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, topic := range []string{"pub-a", "secret", "pub-b"} {
		res := kmsg.NewDescribeConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, topic
		req.Resources = append(req.Resources, res)
	}
	v := filterRequest(enf, testConn, req)
	if !v.Modified || v.OnResponse == nil || len(req.Resources) != 2 {
		t.Fatalf("verdict %+v forwarded %+v", v, req.Resources)
	}
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, topic := range []string{"pub-b", "pub-a"} {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
		resp.Resources = append(resp.Resources, rr)
	}
	applyResponse(t, v, resp)
	var got []string
	for _, rr := range resp.Resources {
		got = append(got, rr.ResourceName+"="+itoa(int(rr.ErrorCode)))
	}
	if s, want := strings.Join(got, " "), "pub-a=0 secret=29 pub-b=0"; s != want {
		t.Errorf("merged %s, want %s", s, want)
	}
}

// TestTopicSplitMergesInClientOrder drives the shared per-topic split
// through the handlers built on it: the denied topics leave the request,
// the upstream answers the rest, and the client gets every topic back in
// the order it asked, the denied ones with the denial in each partition.
func TestTopicSplitMergesInClientOrder(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  rules:
    - {name: g, principals: ["*"], allow: [read, describe], groups: ["grp"], topics: ["pub-*"]}
`, nil)
	t.Run("OffsetCommit", func(t *testing.T) {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.SetVersion(8)
		req.Group = "grp"
		for _, topic := range []string{"pub-a", "secret", "pub-b"} {
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic = topic
			rt.Partitions = []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0}, {Partition: 1}}
			req.Topics = append(req.Topics, rt)
		}
		v := filterRequest(enf, testConn, req)
		if !v.Modified || v.OnResponse == nil || len(req.Topics) != 2 || req.Topics[0].Topic != "pub-a" || req.Topics[1].Topic != "pub-b" {
			t.Fatalf("verdict %+v forwarded %+v", v, req.Topics)
		}
		// The upstream answers the forwarded topics, in its own order.
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, topic := range []string{"pub-b", "pub-a"} {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic = topic
			rt.Partitions = []kmsg.OffsetCommitResponseTopicPartition{{Partition: 0}, {Partition: 1}}
			resp.Topics = append(resp.Topics, rt)
		}
		applyResponse(t, v, resp)
		var got []string
		for _, rt := range resp.Topics {
			for _, p := range rt.Partitions {
				got = append(got, rt.Topic+"/"+itoa(int(p.Partition))+"="+itoa(int(p.ErrorCode)))
			}
		}
		want := "pub-a/0=0 pub-a/1=0 secret/0=29 secret/1=29 pub-b/0=0 pub-b/1=0"
		if s := strings.Join(got, " "); s != want {
			t.Errorf("merged %s, want %s", s, want)
		}
	})
	t.Run("ListOffsets-wrong-response", func(t *testing.T) {
		req := kmsg.NewPtrListOffsetsRequest()
		for _, topic := range []string{"secret", "pub-a"} {
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = topic
			rt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0}}
			req.Topics = append(req.Topics, rt)
		}
		v := filterRequest(enf, testConn, req)
		if v.OnResponse == nil {
			t.Fatalf("verdict %+v", v)
		}
		if err := v.OnResponse(kmsg.NewPtrMetadataResponse()); err == nil {
			t.Error("a response of another API was merged without an error")
		}
	})
}
