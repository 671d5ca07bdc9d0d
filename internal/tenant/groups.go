package tenant

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Coordinator key types of FindCoordinator.
const (
	coordinatorGroup       int8 = 0
	coordinatorTransaction int8 = 1
)

// protocolConsumer is the classic group protocol type whose member
// metadata and assignments are consumer-protocol bytes naming topics.
const protocolConsumer = "consumer"

// classicGroupAPIs maps the classic group APIs and FindCoordinator.
func classicGroupAPIs() []api {
	return []api{
		typedEntry(kmsg.FindCoordinator.Int16(), upFindCoordinator, downFindCoordinator,
			"req.CoordinatorKey", "req.CoordinatorKeys", "resp.Coordinators.Key"),
		typedEntry(kmsg.JoinGroup.Int16(), upJoinGroup, downJoinGroup,
			"req.Group", "req.Protocols.Metadata", "resp.Members.ProtocolMetadata"), // consumer-protocol bytes: consumerprotocol.go
		typedEntry(kmsg.SyncGroup.Int16(), upSyncGroup, downSyncGroup,
			"req.Group", "req.GroupAssignment.MemberAssignment", "resp.MemberAssignment"),
		typedEntry[*kmsg.HeartbeatRequest, *kmsg.HeartbeatResponse](kmsg.Heartbeat.Int16(),
			func(_ context.Context, m *Mapper, r *kmsg.HeartbeatRequest) error {
				r.Group = m.UpGroup(r.Group)
				return nil
			},
			nil, "req.Group"),
		typedEntry[*kmsg.LeaveGroupRequest, *kmsg.LeaveGroupResponse](kmsg.LeaveGroup.Int16(),
			func(_ context.Context, m *Mapper, r *kmsg.LeaveGroupRequest) error {
				r.Group = m.UpGroup(r.Group)
				return nil
			},
			nil, "req.Group"),
		typedEntry(kmsg.DescribeGroups.Int16(), upDescribeGroups, downDescribeGroups,
			"req.Groups", "resp.Groups.Group", "resp.Groups.Members.ProtocolMetadata", "resp.Groups.Members.MemberAssignment"),
		typedEntry(kmsg.ListGroups.Int16(), nil, downListGroups, "resp.Groups.Group"),
		typedEntry(kmsg.DeleteGroups.Int16(),
			func(_ context.Context, m *Mapper, r *kmsg.DeleteGroupsRequest) error {
				upEach(r.Groups, m.UpGroup)
				return nil
			},
			func(m *Mapper, _ *kmsg.DeleteGroupsRequest, resp *kmsg.DeleteGroupsResponse) error {
				resp.Groups = downGroups(m, resp.Groups, func(g *kmsg.DeleteGroupsResponseGroup) (*string, *string) { return &g.Group, g.ErrorMessage }, nil)
				return nil
			},
			"req.Groups", "resp.Groups.Group"),
	}
}

// coordinatorKeyMapping is how keys of a FindCoordinator type map; ok is
// false for key types a client never asks for (share-coordinator keys are
// brokers' own), which kproxy refuses.
func coordinatorKeyMapping(m *Mapper, keyType int8) (up func(string) string, down func(string) (string, bool), ok bool) {
	switch keyType {
	case coordinatorGroup:
		return m.UpGroup, m.DownGroup, true
	case coordinatorTransaction:
		return m.UpTxnID, m.DownTxnID, true
	}
	return nil, nil, false
}

func upFindCoordinator(_ context.Context, m *Mapper, r *kmsg.FindCoordinatorRequest) error {
	up, _, ok := coordinatorKeyMapping(m, r.CoordinatorType)
	if !ok {
		return refuseFindCoordinator(r)
	}
	r.CoordinatorKey = up(r.CoordinatorKey)
	upEach(r.CoordinatorKeys, up)
	return nil
}

// refuseFindCoordinator answers a lookup of a key type a virtual cluster
// does not serve with INVALID_REQUEST for every key.
func refuseFindCoordinator(r *kmsg.FindCoordinatorRequest) error {
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	resp.Version = r.Version
	msg := kmsg.StringPtr("kproxy: this coordinator type is not available in a virtual cluster")
	if r.Version < 4 {
		resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Port = kerr.InvalidRequest.Code, msg, -1, -1
		return &Answer{Response: resp}
	}
	for _, k := range r.CoordinatorKeys {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.NodeID, co.Port, co.ErrorCode, co.ErrorMessage = k, -1, -1, kerr.InvalidRequest.Code, msg
		resp.Coordinators = append(resp.Coordinators, co)
	}
	return &Answer{Response: resp}
}

// downFindCoordinator maps the keys by the request's key type; without
// the request, a key is the tenant's group or transactional id.
func downFindCoordinator(m *Mapper, r *kmsg.FindCoordinatorRequest, resp *kmsg.FindCoordinatorResponse) error {
	m.DownMessage(resp.ErrorMessage)
	down := func(key string) (string, bool) {
		if d, ok := m.DownGroup(key); ok {
			return d, true
		}
		return m.DownTxnID(key)
	}
	if r != nil {
		var ok bool
		if _, down, ok = coordinatorKeyMapping(m, r.CoordinatorType); !ok {
			resp.Coordinators = nil
			return nil
		}
	}
	resp.Coordinators = keepMapped(resp.Coordinators, func(c *kmsg.FindCoordinatorResponseCoordinator) *string { return &c.Key }, down)
	for i := range resp.Coordinators {
		m.DownMessage(resp.Coordinators[i].ErrorMessage)
	}
	return nil
}

func upJoinGroup(_ context.Context, m *Mapper, r *kmsg.JoinGroupRequest) error {
	r.Group = m.UpGroup(r.Group)
	if r.ProtocolType != protocolConsumer {
		return nil
	}
	for i := range r.Protocols {
		up, err := upConsumerMetadata(m, r.Protocols[i].Metadata)
		if err != nil {
			resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
			resp.Version, resp.ErrorCode, resp.Generation, resp.MemberID = r.Version, kerr.InconsistentGroupProtocol.Code, -1, r.MemberID
			return &Answer{Response: resp}
		}
		r.Protocols[i].Metadata = up
	}
	return nil
}

// downJoinGroup maps the members' subscriptions of a consumer group, as
// the request (or, without it, the response from v7) names the type.
func downJoinGroup(m *Mapper, r *kmsg.JoinGroupRequest, resp *kmsg.JoinGroupResponse) error {
	protocolType := resp.ProtocolType
	if r != nil {
		protocolType = &r.ProtocolType
	}
	if protocolType == nil || *protocolType != protocolConsumer {
		return nil
	}
	for i := range resp.Members {
		resp.Members[i].ProtocolMetadata = downConsumerMetadata(m, resp.Members[i].ProtocolMetadata)
	}
	return nil
}

// syncIsConsumer reports whether the assignments of a SyncGroup are
// consumer-protocol bytes: the request names its protocol type from v5;
// before, a blob that is exactly a consumer assignment is taken as one.
func syncIsConsumer(protocolType *string, blob []byte) bool {
	if protocolType != nil {
		return *protocolType == protocolConsumer
	}
	return isExactConsumerAssignment(blob)
}

func upSyncGroup(_ context.Context, m *Mapper, r *kmsg.SyncGroupRequest) error {
	r.Group = m.UpGroup(r.Group)
	for i := range r.GroupAssignment {
		a := &r.GroupAssignment[i]
		if !syncIsConsumer(r.ProtocolType, a.MemberAssignment) {
			continue
		}
		up, err := upConsumerAssignment(m, a.MemberAssignment)
		if err != nil {
			resp := r.ResponseKind().(*kmsg.SyncGroupResponse)
			resp.Version, resp.ErrorCode = r.Version, kerr.InconsistentGroupProtocol.Code
			return &Answer{Response: resp}
		}
		a.MemberAssignment = up
	}
	return nil
}

func downSyncGroup(m *Mapper, r *kmsg.SyncGroupRequest, resp *kmsg.SyncGroupResponse) error {
	protocolType := resp.ProtocolType
	if r != nil && r.ProtocolType != nil {
		protocolType = r.ProtocolType
	}
	if syncIsConsumer(protocolType, resp.MemberAssignment) {
		resp.MemberAssignment = downConsumerAssignment(m, resp.MemberAssignment)
	}
	return nil
}

func upDescribeGroups(_ context.Context, m *Mapper, r *kmsg.DescribeGroupsRequest) error {
	upEach(r.Groups, m.UpGroup)
	return nil
}

func downDescribeGroups(m *Mapper, _ *kmsg.DescribeGroupsRequest, resp *kmsg.DescribeGroupsResponse) error {
	resp.Groups = downGroups(m, resp.Groups,
		func(g *kmsg.DescribeGroupsResponseGroup) (*string, *string) { return &g.Group, g.ErrorMessage },
		func(g *kmsg.DescribeGroupsResponseGroup) {
			if g.ProtocolType != protocolConsumer {
				return
			}
			for j := range g.Members {
				mb := &g.Members[j]
				if len(mb.ProtocolMetadata) > 0 {
					mb.ProtocolMetadata = downConsumerMetadata(m, mb.ProtocolMetadata)
				}
				if len(mb.MemberAssignment) > 0 {
					mb.MemberAssignment = downConsumerAssignment(m, mb.MemberAssignment)
				}
			}
		})
	return nil
}

// downListGroups lists only the tenant's groups.
func downListGroups(m *Mapper, _ *kmsg.ListGroupsRequest, resp *kmsg.ListGroupsResponse) error {
	resp.Groups = keepMapped(resp.Groups, func(g *kmsg.ListGroupsResponseGroup) *string { return &g.Group }, m.DownGroup)
	return nil
}
