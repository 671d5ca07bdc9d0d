package e2epolicy

import (
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestLegacyMetadataAsksForAllTopics: a Metadata v1 request (which the
// broker would answer by auto-creating every missing listed topic) naming
// a topic governance refuses is sent to kfake as an all-topics request,
// and the client gets exactly its listed topics back: the existing one
// with its partitions, the missing ones as missing.
func TestLegacyMetadataAsksForAllTopics(t *testing.T) {
	e := newEnv(t, 1, []string{"orders.eu", "other.topic"}, `
policy:
  rules:
    - {name: everything, principals: ["*"], allow: [all], topics: ["*"], cluster: true}
  governance:
    - {name: names, topic_changes: {name_pattern: "re:^[a-z]+\\.[a-z]+$"}}
`)
	// Not v0: there an empty list asks for all topics (Kafka's
	// MetadataRequest.isAllTopics), but kfake answers it with none; the
	// policy tests cover v0.
	for _, version := range []int16{1, 3} {
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(version)
		for _, name := range []string{"orders.eu", "Bad_Name", "new.topic"} {
			req.Topics = append(req.Topics, kmsg.MetadataRequestTopic{Topic: kmsg.StringPtr(name)})
		}
		resp := testkit.DialRaw(t, e.proxy.BootstrapAddr(), "legacy").MustRoundTrip(t, req).(*kmsg.MetadataResponse)
		var got []string
		for _, tp := range resp.Topics {
			got = append(got, *tp.Topic+":"+strconv.Itoa(int(tp.ErrorCode))+":"+strconv.Itoa(len(tp.Partitions)))
		}
		if want := "orders.eu:0:3 Bad_Name:3:0 new.topic:3:0"; strings.Join(got, " ") != want {
			t.Errorf("v%d: answered %q, want %q", version, strings.Join(got, " "), want)
		}
		if len(resp.Brokers) != 1 {
			t.Errorf("v%d: %d brokers in the answer", version, len(resp.Brokers))
		}
	}
}
