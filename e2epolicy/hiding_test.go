package e2epolicy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// hidingPolicy lets every principal describe every topic but the
// "*.hidden" ones, whose names sort between the visible ones.
const hidingPolicy = `
policy:
  default: deny
  rules:
    - {name: describe-all, principals: ["*"], allow: [describe, read, delete, create], topics: ["*"]}
    - {name: hide, principals: ["*"], deny: [all], topics: ["*.hidden"]}
`

var hidingTopics = []string{"t1", "t2.hidden", "t3", "t4.hidden", "t5.hidden", "t6"}

// describePage asks for one page of DescribeTopicPartitions.
func describePage(t *testing.T, raw *rawConn, limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor, topics ...string) *kmsg.DescribeTopicPartitionsResponse {
	t.Helper()
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = limit
	req.Cursor = cursor
	for _, name := range topics {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = name
		req.Topics = append(req.Topics, rt)
	}
	return raw.roundTrip(t, req).(*kmsg.DescribeTopicPartitionsResponse)
}

// pageString renders a page as "topic/partition ... -> cursor".
func pageString(resp *kmsg.DescribeTopicPartitionsResponse) string {
	var parts []string
	for _, tp := range resp.Topics {
		if tp.ErrorCode != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", deref(tp.Topic), tp.ErrorCode))
		}
		for _, p := range tp.Partitions {
			parts = append(parts, fmt.Sprintf("%s/%d", deref(tp.Topic), p.Partition))
		}
	}
	s := strings.Join(parts, " ")
	if resp.NextCursor != nil {
		s += fmt.Sprintf(" -> %s/%d", resp.NextCursor.Topic, resp.NextCursor.Partition)
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestDescribeTopicPartitionsCursorHidesTopics: following the cursor of
// an all-topics DescribeTopicPartitions with a partition limit of 1 walks
// every describable partition once, in order, and no page or cursor ever
// names a hidden topic (before the fix the cursor named each hidden topic
// and, followed, listed its partitions' count). A client cursor naming a
// hidden topic answers the same whether that topic exists or not.
func TestDescribeTopicPartitionsCursorHidesTopics(t *testing.T) {
	e := newEnv(t, 1, hidingTopics, hidingPolicy)
	raw := dialRaw(t, e.proxy.BootstrapAddr(), "e2e-dtp")

	var walked []string
	var cursor *kmsg.DescribeTopicPartitionsRequestCursor
	for page := 0; ; page++ {
		if page > 20 {
			t.Fatalf("cursor does not end; walked %v", walked)
		}
		resp := describePage(t, raw, 1, cursor)
		s := pageString(resp)
		if strings.Contains(s, "hidden") {
			t.Fatalf("page %d names a hidden topic: %q", page, s)
		}
		for _, tp := range resp.Topics {
			for _, p := range tp.Partitions {
				walked = append(walked, fmt.Sprintf("%s/%d", *tp.Topic, p.Partition))
			}
		}
		if resp.NextCursor == nil {
			break
		}
		cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: resp.NextCursor.Topic, Partition: resp.NextCursor.Partition}
	}
	want := []string{"t1/0", "t1/1", "t1/2", "t3/0", "t3/1", "t3/2", "t6/0", "t6/1", "t6/2"}
	if !slices.Equal(walked, want) {
		t.Errorf("walked %v, want %v", walked, want)
	}

	// A larger page spans hidden topics without counting them.
	if got := pageString(describePage(t, raw, 4, nil)); got != "t1/0 t1/1 t1/2 t3/0 -> t3/1" {
		t.Errorf("limit 4 page %q", got)
	}

	// A hostile cursor naming a hidden topic: the same answer for one that
	// exists and one that does not.
	existing := pageString(describePage(t, raw, 1, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "t4.hidden", Partition: 1}))
	missing := pageString(describePage(t, raw, 1, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "t4.gone.hidden", Partition: 1}))
	if existing != "t6/0 -> t6/1" || missing != existing {
		t.Errorf("cursor at an existing hidden topic: %q; at a missing one: %q; want both t6/0 -> t6/1", existing, missing)
	}

	// Listed topics with the cursor at a denied one: as Kafka, the denied
	// topic is answered 29 and the page goes on after it; nothing before
	// the cursor is answered.
	got := pageString(describePage(t, raw, 10, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "t2.hidden"}, "t1", "t2.hidden", "t3"))
	if got != "t2.hidden=29 t3/0 t3/1 t3/2" {
		t.Errorf("listed topics from a denied cursor: %q", got)
	}
}
