package policy

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestStreamsTopologyDescriptionNamesOnlyDescribableTopics: a member of a
// streams group it may read sends a topology description naming a topic
// it may not describe. The cluster would keep the name and show it to the
// group's describers, so the update is refused (TOPIC_AUTHORIZATION_FAILED,
// top-level) as a heartbeat naming it in its topology is, and never
// forwarded; one naming only describable topics goes upstream.
func TestStreamsTopologyDescriptionNamesOnlyDescribableTopics(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  default: deny
  rules:
    - {name: group, principals: ["*"], allow: [read], groups: ["g"]}
    - {name: topics, principals: ["*"], allow: [read], topics: ["in", "out"]}
`, nil)
	update := func(source, sink string) *kmsg.StreamsGroupTopologyDescriptionUpdateRequest {
		r := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
		r.Group, r.MemberID = "g", "m"
		node := kmsg.NewTopologyDescriptionNode()
		node.Name, node.SourceTopics, node.SinkTopic = "n", []string{source}, kmsg.StringPtr(sink)
		sub := kmsg.NewTopologyDescriptionSubtopology()
		sub.Nodes = append(sub.Nodes, node)
		r.TopologyDescription.Subtopologies = append(r.TopologyDescription.Subtopologies, sub)
		return r
	}
	if v := filterRequest(enf, testConn, update("in", "out")); v.Respond != nil || v.Close != nil {
		t.Errorf("a description of describable topics was not forwarded: %+v", v)
	}
	for _, r := range []*kmsg.StreamsGroupTopologyDescriptionUpdateRequest{update("secret", "out"), update("in", "secret")} {
		v := filterRequest(enf, testConn, r)
		resp, ok := v.Respond.(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse)
		if !ok || resp.ErrorCode != errTopicAuthorizationFailed {
			t.Errorf("a description naming a hidden topic: %+v, want TOPIC_AUTHORIZATION_FAILED answered by the policy", v)
		}
	}
}

// TestStreamsSourceTopicRegexNeedsEveryTopic: a streams member whose
// topology reads a source topic regex lets the broker resolve it over
// every topic kproxy's identity sees, and assigns it tasks of hidden ones,
// as a consumer group's regex subscription would. It is refused unless
// the principal may describe every topic (TOPIC_AUTHORIZATION_FAILED,
// top-level, never forwarded); with Describe on every topic it goes
// upstream.
func TestStreamsSourceTopicRegexNeedsEveryTopic(t *testing.T) {
	heartbeat := func() *kmsg.StreamsGroupHeartbeatRequest {
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group, r.MemberID = "g", "m"
		topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		sub := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		sub.SubtopologyID, sub.SourceTopicRegex = "0", []string{"in.*"}
		topo.Subtopologies = append(topo.Subtopologies, sub)
		r.Topology = &topo
		return r
	}
	some := newTestEnforcer(t, `
policy:
  default: deny
  rules:
    - {name: group, principals: ["*"], allow: [read], groups: ["g"]}
    - {name: topics, principals: ["*"], allow: [read], topics: ["in.*"]}
`, nil)
	v := filterRequest(some, testConn, heartbeat())
	if resp, ok := v.Respond.(*kmsg.StreamsGroupHeartbeatResponse); !ok || resp.ErrorCode != errTopicAuthorizationFailed {
		t.Errorf("a source topic regex from a principal that may not describe every topic: %+v, want TOPIC_AUTHORIZATION_FAILED answered by the policy", v)
	}
	every := newTestEnforcer(t, `
policy:
  default: deny
  rules:
    - {name: group, principals: ["*"], allow: [read], groups: ["g"]}
    - {name: topics, principals: ["*"], allow: [read], topics: ["*"]}
`, nil)
	if v := filterRequest(every, testConn, heartbeat()); v.Respond != nil || v.Close != nil {
		t.Errorf("a source topic regex from a principal that may describe every topic was not forwarded: %+v", v)
	}
}
