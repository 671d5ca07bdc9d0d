package tenant

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The consumer protocol (protocol type "consumer") embeds topic names in
// classic groups' opaque bytes: a member's subscription
// (kmsg.ConsumerMemberMetadata: topics and owned partitions) in JoinGroup
// and DescribeGroups, the leader's assignments
// (kmsg.ConsumerMemberAssignment) in SyncGroup and DescribeGroups. UserData
// is the assignor's own and passes unchanged.
//
// A client's blob kproxy cannot read is refused (the caller answers
// INCONSISTENT_GROUP_PROTOCOL): forwarding it would hand other members
// names kproxy never prefixed. An upstream blob it cannot read (a member
// that did not come through this virtual cluster) is shown as an empty
// subscription or assignment: the tenant learns nothing from it.

// upConsumerMetadata is the subscription b with the upstream's topic names.
func upConsumerMetadata(m *Mapper, b []byte) ([]byte, error) {
	md, version, err := readConsumerMetadata(b)
	if err != nil {
		return nil, fmt.Errorf("tenant: consumer protocol subscription: %w", err)
	}
	upEach(md.Topics, m.UpTopic)
	upTopics(m, md.OwnedPartitions, func(p *kmsg.ConsumerMemberMetadataOwnedPartition) *string { return &p.Topic })
	return appendConsumerMetadata(&md, version), nil
}

// readConsumerMetadata reads the subscription b and the version it says.
// A subscription that says version 1 or later but ends after the version
// 0 fields (kafka-go writes version 1 so, without owned partitions; the
// broker never parses it) is read as version 0.
func readConsumerMetadata(b []byte) (kmsg.ConsumerMemberMetadata, int16, error) {
	var md kmsg.ConsumerMemberMetadata
	err := md.ReadFrom(b)
	if err == nil || len(b) < 2 {
		return md, md.Version, err
	}
	version := int16(binary.BigEndian.Uint16(b))
	v0 := append([]byte{0, 0}, b[2:]...)
	if md.ReadFrom(v0) != nil {
		return md, version, err
	}
	return md, version, nil
}

// appendConsumerMetadata encodes md in its layout, saying version, which
// readConsumerMetadata returned: the bytes keep the shape they came in.
func appendConsumerMetadata(md *kmsg.ConsumerMemberMetadata, version int16) []byte {
	out := md.AppendTo(nil)
	binary.BigEndian.PutUint16(out, uint16(version))
	return out
}

// downConsumerMetadata is the subscription b with the tenant's topic
// names, others' topics left out.
func downConsumerMetadata(m *Mapper, b []byte) []byte {
	md, version, err := readConsumerMetadata(b)
	if err != nil {
		empty := kmsg.NewConsumerMemberMetadata()
		return empty.AppendTo(nil)
	}
	md.Topics = downNames(md.Topics, m.DownTopic)
	md.OwnedPartitions = keepMapped(md.OwnedPartitions, func(p *kmsg.ConsumerMemberMetadataOwnedPartition) *string { return &p.Topic }, m.DownTopic)
	return appendConsumerMetadata(&md, version)
}

// upConsumerAssignment is the assignment b with the upstream's names.
func upConsumerAssignment(m *Mapper, b []byte) ([]byte, error) {
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(b); err != nil {
		return nil, fmt.Errorf("tenant: consumer protocol assignment: %w", err)
	}
	upTopics(m, a.Topics, func(t *kmsg.ConsumerMemberAssignmentTopic) *string { return &t.Topic })
	return a.AppendTo(nil), nil
}

// downConsumerAssignment is the assignment b with the tenant's names,
// others' topics left out. An empty blob (a member with no assignment yet)
// stays empty.
func downConsumerAssignment(m *Mapper, b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(b); err != nil {
		empty := kmsg.NewConsumerMemberAssignment()
		return empty.AppendTo(nil)
	}
	a.Topics = keepMapped(a.Topics, func(t *kmsg.ConsumerMemberAssignmentTopic) *string { return &t.Topic }, m.DownTopic)
	return a.AppendTo(nil)
}

// isExactConsumerAssignment reports whether b reads as a consumer-protocol
// assignment that encodes back to exactly b: the test for SyncGroup before
// v5, which does not say its protocol type. Other protocols' bytes
// (Connect's, say) do not survive it and pass unchanged.
func isExactConsumerAssignment(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	var a kmsg.ConsumerMemberAssignment
	if a.ReadFrom(b) != nil || a.Version < 0 {
		return false
	}
	return bytes.Equal(a.AppendTo(nil), b)
}
