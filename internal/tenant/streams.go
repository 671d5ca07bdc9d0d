package tenant

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// streamsGroupAPIs maps the streams group APIs (KIP-1071): the group id and
// every topic a topology names (source topics and regexes, changelog and
// repartition topics, the topology description's nodes).
func streamsGroupAPIs() []api {
	return []api{
		typedEntry(kmsg.StreamsGroupHeartbeat.Int16(), upStreamsGroupHeartbeat, downStreamsGroupHeartbeat,
			"req.Group", "req.Topology.Subtopologies.SourceTopics", "req.Topology.Subtopologies.SourceTopicRegex",
			"req.Topology.Subtopologies.StateChangelogTopics.Topic", "req.Topology.Subtopologies.RepartitionSinkTopics",
			"req.Topology.Subtopologies.RepartitionSourceTopics.Topic",
			"resp.PartitionsByUserEndpoint.ActivePartitions.Topic", "resp.PartitionsByUserEndpoint.StandbyPartitions.Topic"),
		typedEntry(kmsg.StreamsGroupDescribe.Int16(),
			func(_ context.Context, m *Mapper, r *kmsg.StreamsGroupDescribeRequest) error {
				upEach(r.Groups, m.UpGroup)
				return nil
			},
			downStreamsGroupDescribe,
			"req.Groups", "resp.Groups.Group",
			"resp.Groups.Topology.Subtopologies.SourceTopics", "resp.Groups.Topology.Subtopologies.RepartitionSinkTopics",
			"resp.Groups.Topology.Subtopologies.StateChangelogTopics.Topic", "resp.Groups.Topology.Subtopologies.RepartitionSourceTopics.Topic",
			"resp.Groups.TopologyDescription.Subtopologies.Nodes.SourceTopics", "resp.Groups.TopologyDescription.Subtopologies.Nodes.SinkTopic",
			"resp.Groups.TopologyDescription.GlobalStores.Source.SourceTopics", "resp.Groups.TopologyDescription.GlobalStores.Source.SinkTopic",
			"resp.Groups.TopologyDescription.GlobalStores.Processor.SourceTopics", "resp.Groups.TopologyDescription.GlobalStores.Processor.SinkTopic"),
		typedEntry(kmsg.StreamsGroupTopologyDescriptionUpdate.Int16(),
			func(_ context.Context, m *Mapper, r *kmsg.StreamsGroupTopologyDescriptionUpdateRequest) error {
				r.Group = m.UpGroup(r.Group)
				mapTopologyDescription(r.TopologyDescription.Subtopologies, r.TopologyDescription.GlobalStores, upNode(m))
				return nil
			},
			func(m *Mapper, _ *kmsg.StreamsGroupTopologyDescriptionUpdateRequest, resp *kmsg.StreamsGroupTopologyDescriptionUpdateResponse) error {
				m.DownMessage(resp.ErrorMessage)
				return nil
			},
			"req.Group", "req.TopologyDescription.Subtopologies.Nodes.SourceTopics", "req.TopologyDescription.Subtopologies.Nodes.SinkTopic",
			"req.TopologyDescription.GlobalStores.Source.SourceTopics", "req.TopologyDescription.GlobalStores.Source.SinkTopic",
			"req.TopologyDescription.GlobalStores.Processor.SourceTopics", "req.TopologyDescription.GlobalStores.Processor.SinkTopic"),
	}
}

func upStreamsGroupHeartbeat(_ context.Context, m *Mapper, r *kmsg.StreamsGroupHeartbeatRequest) error {
	r.Group = m.UpGroup(r.Group)
	if r.Topology == nil {
		return nil
	}
	for i := range r.Topology.Subtopologies {
		s := &r.Topology.Subtopologies[i]
		upEach(s.SourceTopics, m.UpTopic)
		upEach(s.RepartitionSinkTopics, m.UpTopic)
		upTopics(m, s.StateChangelogTopics, topicInfoName)
		upTopics(m, s.RepartitionSourceTopics, topicInfoName)
		for j, re := range s.SourceTopicRegex {
			up, err := upRegex(m.names.Topic, re)
			if err != nil {
				resp := r.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
				resp.Version, resp.ErrorCode = r.Version, kerr.InvalidRegularExpression.Code
				resp.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("kproxy: SourceTopicRegex: %v", err))
				return &Answer{Response: resp}
			}
			s.SourceTopicRegex[j] = up
		}
	}
	return nil
}

func downStreamsGroupHeartbeat(m *Mapper, _ *kmsg.StreamsGroupHeartbeatRequest, resp *kmsg.StreamsGroupHeartbeatResponse) error {
	m.DownMessage(resp.ErrorMessage)
	for i := range resp.Status {
		m.DownMessage(&resp.Status[i].StatusDetail)
	}
	for i := range resp.PartitionsByUserEndpoint {
		e := &resp.PartitionsByUserEndpoint[i]
		e.ActivePartitions = keepMapped(e.ActivePartitions,
			func(p *kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition) *string {
				return &p.Topic
			}, m.DownTopic)
		e.StandbyPartitions = keepMapped(e.StandbyPartitions,
			func(p *kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition) *string {
				return &p.Topic
			}, m.DownTopic)
	}
	return nil
}

func downStreamsGroupDescribe(m *Mapper, _ *kmsg.StreamsGroupDescribeRequest, resp *kmsg.StreamsGroupDescribeResponse) error {
	resp.Groups = downGroups(m, resp.Groups,
		func(g *kmsg.StreamsGroupDescribeResponseGroup) (*string, *string) { return &g.Group, g.ErrorMessage },
		func(g *kmsg.StreamsGroupDescribeResponseGroup) {
			if g.Topology != nil {
				for j := range g.Topology.Subtopologies {
					s := &g.Topology.Subtopologies[j]
					s.SourceTopics = downNames(s.SourceTopics, m.DownTopic)
					s.RepartitionSinkTopics = downNames(s.RepartitionSinkTopics, m.DownTopic)
					s.StateChangelogTopics = downTopics(m, s.StateChangelogTopics, topicInfoName)
					s.RepartitionSourceTopics = downTopics(m, s.RepartitionSourceTopics, topicInfoName)
				}
			}
			if d := g.TopologyDescription; d != nil {
				mapTopologyDescription(d.Subtopologies, d.GlobalStores, downNode(m))
			}
		})
	return nil
}

func topicInfoName(t *kmsg.TopicInfo) *string { return &t.Topic }

// mapTopologyDescription applies node to every node of a topology
// description.
func mapTopologyDescription(subs []kmsg.TopologyDescriptionSubtopology, stores []kmsg.TopologyDescriptionGlobalStore, node func(*kmsg.TopologyDescriptionNode)) {
	for i := range subs {
		for j := range subs[i].Nodes {
			node(&subs[i].Nodes[j])
		}
	}
	for i := range stores {
		node(&stores[i].Source)
		node(&stores[i].Processor)
	}
}

func upNode(m *Mapper) func(*kmsg.TopologyDescriptionNode) {
	return func(n *kmsg.TopologyDescriptionNode) {
		upEach(n.SourceTopics, m.UpTopic)
		upPtr(n.SinkTopic, m.UpTopic)
	}
}

func downNode(m *Mapper) func(*kmsg.TopologyDescriptionNode) {
	return func(n *kmsg.TopologyDescriptionNode) {
		n.SourceTopics = downNames(n.SourceTopics, m.DownTopic)
		downPtr(&n.SinkTopic, m.DownTopic)
	}
}
