package protocol

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupAPIs are the responses GroupResponseErrorCode reads.
var groupAPIs = []kmsg.Key{
	kmsg.JoinGroup, kmsg.SyncGroup, kmsg.Heartbeat, kmsg.LeaveGroup, kmsg.OffsetDelete,
	kmsg.ConsumerGroupHeartbeat, kmsg.ShareGroupHeartbeat, kmsg.StreamsGroupHeartbeat,
	kmsg.AlterShareGroupOffsets, kmsg.DeleteShareGroupOffsets,
	kmsg.DescribeGroups, kmsg.DeleteGroups, kmsg.ConsumerGroupDescribe, kmsg.ShareGroupDescribe,
	kmsg.StreamsGroupDescribe, kmsg.OffsetFetch, kmsg.OffsetCommit, kmsg.TxnOffsetCommit,
}

// kmsgGroupError is GroupResponseErrorCode's contract read off kmsg's full
// decode of the response.
func kmsgGroupError(resp kmsg.Response) (int16, bool) {
	switch r := resp.(type) {
	case *kmsg.JoinGroupResponse:
		return r.ErrorCode, true
	case *kmsg.SyncGroupResponse:
		return r.ErrorCode, true
	case *kmsg.HeartbeatResponse:
		return r.ErrorCode, true
	case *kmsg.LeaveGroupResponse:
		return r.ErrorCode, true
	case *kmsg.OffsetDeleteResponse:
		return r.ErrorCode, true
	case *kmsg.ConsumerGroupHeartbeatResponse:
		return r.ErrorCode, true
	case *kmsg.ShareGroupHeartbeatResponse:
		return r.ErrorCode, true
	case *kmsg.StreamsGroupHeartbeatResponse:
		return r.ErrorCode, true
	case *kmsg.AlterShareGroupOffsetsResponse:
		return r.ErrorCode, true
	case *kmsg.DeleteShareGroupOffsetsResponse:
		return r.ErrorCode, true
	case *kmsg.DescribeGroupsResponse:
		if len(r.Groups) > 0 {
			return r.Groups[0].ErrorCode, true
		}
	case *kmsg.DeleteGroupsResponse:
		if len(r.Groups) > 0 {
			return r.Groups[0].ErrorCode, true
		}
	case *kmsg.ConsumerGroupDescribeResponse:
		if len(r.Groups) > 0 {
			return r.Groups[0].ErrorCode, true
		}
	case *kmsg.ShareGroupDescribeResponse:
		if len(r.Groups) > 0 {
			return r.Groups[0].ErrorCode, true
		}
	case *kmsg.StreamsGroupDescribeResponse:
		if len(r.Groups) > 0 {
			return r.Groups[0].ErrorCode, true
		}
	case *kmsg.OffsetFetchResponse:
		switch {
		case r.Version >= 8:
			if len(r.Groups) > 0 {
				return r.Groups[0].ErrorCode, true
			}
		case r.Version >= 2:
			return r.ErrorCode, true
		case len(r.Topics) > 0 && len(r.Topics[0].Partitions) > 0:
			return r.Topics[0].Partitions[0].ErrorCode, true
		}
	case *kmsg.OffsetCommitResponse:
		if len(r.Topics) > 0 && len(r.Topics[0].Partitions) > 0 {
			return r.Topics[0].Partitions[0].ErrorCode, true
		}
	case *kmsg.TxnOffsetCommitResponse:
		if len(r.Topics) > 0 && len(r.Topics[0].Partitions) > 0 {
			return r.Topics[0].Partitions[0].ErrorCode, true
		}
	}
	return 0, false
}

// groupResponse is a response of key at version whose group error is code,
// with every field before it filled, so that a reader that miscounts a
// field reads something else.
func groupResponse(key kmsg.Key, version int16, code int16) kmsg.Response {
	meta := "committed-metadata"
	msg := "a message"
	resp := kmsg.ResponseForKey(int16(key))
	resp.SetVersion(version)
	switch r := resp.(type) {
	case *kmsg.JoinGroupResponse:
		r.ThrottleMillis, r.ErrorCode = 7, code
	case *kmsg.SyncGroupResponse:
		r.ThrottleMillis, r.ErrorCode = 7, code
	case *kmsg.HeartbeatResponse:
		r.ThrottleMillis, r.ErrorCode = 7, code
	case *kmsg.LeaveGroupResponse:
		r.ThrottleMillis, r.ErrorCode = 7, code
	case *kmsg.OffsetDeleteResponse:
		r.ThrottleMillis, r.ErrorCode = 7, code
	case *kmsg.ConsumerGroupHeartbeatResponse:
		r.ThrottleMillis, r.ErrorCode, r.ErrorMessage = 7, code, &msg
	case *kmsg.ShareGroupHeartbeatResponse:
		r.ThrottleMillis, r.ErrorCode, r.ErrorMessage = 7, code, &msg
	case *kmsg.StreamsGroupHeartbeatResponse:
		r.ThrottleMillis, r.ErrorCode, r.ErrorMessage = 7, code, &msg
	case *kmsg.AlterShareGroupOffsetsResponse:
		r.ThrottleMillis, r.ErrorCode, r.ErrorMessage = 7, code, &msg
	case *kmsg.DeleteShareGroupOffsetsResponse:
		r.ThrottleMillis, r.ErrorCode, r.ErrorMessage = 7, code, &msg
	case *kmsg.DescribeGroupsResponse:
		r.ThrottleMillis = 7
		r.Groups = []kmsg.DescribeGroupsResponseGroup{{ErrorCode: code, Group: "g"}, {ErrorCode: 99, Group: "h"}}
	case *kmsg.DeleteGroupsResponse:
		r.ThrottleMillis = 7
		r.Groups = []kmsg.DeleteGroupsResponseGroup{{Group: "group-one", ErrorCode: code}, {Group: "h", ErrorCode: 99}}
	case *kmsg.ConsumerGroupDescribeResponse:
		r.ThrottleMillis = 7
		r.Groups = []kmsg.ConsumerGroupDescribeResponseGroup{{ErrorCode: code, Group: "g"}, {ErrorCode: 99}}
	case *kmsg.ShareGroupDescribeResponse:
		r.ThrottleMillis = 7
		r.Groups = []kmsg.ShareGroupDescribeResponseGroup{{ErrorCode: code, GroupID: "g"}, {ErrorCode: 99}}
	case *kmsg.StreamsGroupDescribeResponse:
		r.ThrottleMillis = 7
		r.Groups = []kmsg.StreamsGroupDescribeResponseGroup{{ErrorCode: code, Group: "g"}, {ErrorCode: 99}}
	case *kmsg.OffsetFetchResponse:
		r.ThrottleMillis = 7
		partitions := []kmsg.OffsetFetchResponseTopicPartition{
			{Partition: 1, Offset: 2, LeaderEpoch: 3, Metadata: &meta, ErrorCode: 98},
			{Partition: 4, Offset: 5, LeaderEpoch: 6, ErrorCode: 97},
		}
		if version < 2 {
			partitions[0].ErrorCode = code
		}
		r.Topics = []kmsg.OffsetFetchResponseTopic{{Topic: "topic-a", Partitions: partitions}, {Topic: "b"}}
		r.ErrorCode = code
		r.Groups = []kmsg.OffsetFetchResponseGroup{{
			Group: "group-one",
			Topics: []kmsg.OffsetFetchResponseGroupTopic{{
				Topic: "topic-a", TopicID: [16]byte{1},
				Partitions: []kmsg.OffsetFetchResponseGroupTopicPartition{{Partition: 1, Offset: 2, Metadata: &meta, ErrorCode: 98}},
			}, {Topic: "b"}},
			ErrorCode: code,
		}, {Group: "h", ErrorCode: 99}}
	case *kmsg.OffsetCommitResponse:
		r.ThrottleMillis = 7
		r.Topics = []kmsg.OffsetCommitResponseTopic{{
			Topic: "topic-a", TopicID: [16]byte{1},
			Partitions: []kmsg.OffsetCommitResponseTopicPartition{{Partition: 3, ErrorCode: code}, {Partition: 4, ErrorCode: 99}},
		}}
	case *kmsg.TxnOffsetCommitResponse:
		r.ThrottleMillis = 7
		r.Topics = []kmsg.TxnOffsetCommitResponseTopic{{
			Topic: "topic-a", TopicID: [16]byte{1},
			Partitions: []kmsg.TxnOffsetCommitResponseTopicPartition{{Partition: 3, ErrorCode: code}, {Partition: 4, ErrorCode: 99}},
		}}
	default:
		panic(fmt.Sprintf("no group response for %v", key))
	}
	return resp
}

// groupFrame is resp's frame after the size prefix: header, then body.
func groupFrame(resp kmsg.Response) []byte {
	frame := AppendResponseFrame(nil, 42, resp)
	return frame[FrameSizeLen:]
}

func TestGroupResponseErrorCodeEveryVersion(t *testing.T) {
	for _, key := range groupAPIs {
		for v := int16(0); v <= kmsg.ResponseForKey(int16(key)).MaxVersion(); v++ {
			t.Run(fmt.Sprintf("%s/v%d", key.Name(), v), func(t *testing.T) {
				for _, code := range []int16{0, kerr.NotCoordinator.Code, 15, 14} {
					frame := groupFrame(groupResponse(key, v, code))
					got, ok := GroupResponseErrorCode(int16(key), v, frame)
					if !ok || got != code {
						t.Fatalf("GroupResponseErrorCode = %d, %v; want %d, true", got, ok, code)
					}
				}
			})
		}
	}
}

// TestGroupResponseErrorCodeNeedsOnlyAPrefix: the engine peeks at the start
// of a streamed response, so the code must come from the bytes up to the
// error field, and a prefix ending before it must say false.
func TestGroupResponseErrorCodeNeedsOnlyAPrefix(t *testing.T) {
	frame := groupFrame(groupResponse(kmsg.Heartbeat, 4, kerr.NotCoordinator.Code))
	end := 4 + 1 + 4 + 2 // correlation id, header tags, throttle, error code
	if got, ok := GroupResponseErrorCode(int16(kmsg.Heartbeat), 4, frame[:end]); !ok || got != kerr.NotCoordinator.Code {
		t.Fatalf("on the prefix up to the error: %d, %v; want %d, true", got, ok, kerr.NotCoordinator.Code)
	}
	if got, ok := GroupResponseErrorCode(int16(kmsg.Heartbeat), 4, frame[:end-1]); ok {
		t.Fatalf("on a prefix ending inside the error: %d, true; want false", got)
	}
}

func TestGroupResponseErrorCodeOtherResponses(t *testing.T) {
	cases := []struct {
		name     string
		resp     kmsg.Response
		key, ver int16
	}{
		{"Metadata", kmsg.NewPtrMetadataResponse(), int16(kmsg.Metadata), 12},
		{"FindCoordinator", kmsg.NewPtrFindCoordinatorResponse(), int16(kmsg.FindCoordinator), 4},
		{"ListGroups", kmsg.NewPtrListGroupsResponse(), int16(kmsg.ListGroups), 4},
		{"DescribeGroups without groups", kmsg.NewPtrDescribeGroupsResponse(), int16(kmsg.DescribeGroups), 5},
		{"OffsetCommit without topics", kmsg.NewPtrOffsetCommitResponse(), int16(kmsg.OffsetCommit), 8},
		{"Heartbeat of a version kmsg does not know", kmsg.NewPtrHeartbeatResponse(), int16(kmsg.Heartbeat), -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.ver >= 0 {
				c.resp.SetVersion(c.ver)
			}
			frame := groupFrame(c.resp)
			ver := c.ver
			if ver < 0 {
				ver = c.resp.MaxVersion() + 1
			}
			if got, ok := GroupResponseErrorCode(c.key, ver, frame); ok {
				t.Fatalf("GroupResponseErrorCode = %d, true; want false", got)
			}
		})
	}
}

// FuzzGroupResponseErrorCode: GroupResponseErrorCode never panics, and
// whenever kmsg decodes the body as a response of that API and version, it
// agrees with kmsg's decode (kmsgGroupError), on the whole frame and on
// the frame cut right after the bytes it needs.
func FuzzGroupResponseErrorCode(f *testing.F) {
	for i, key := range groupAPIs {
		max := kmsg.ResponseForKey(int16(key)).MaxVersion()
		for _, v := range []int16{0, max / 2, max} {
			f.Add(uint8(i), v, groupFrame(groupResponse(key, v, int16(i))))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, version int16, frame []byte) {
		key := int16(groupAPIs[int(which)%len(groupAPIs)])
		got, ok := GroupResponseErrorCode(key, version, frame)
		if version < 0 || version > MaxVersion(key) {
			if ok {
				t.Fatalf("code %d for unknown version %d", got, version)
			}
			return
		}
		body, headerOK := SkipResponseHeader(key, version, frame)
		if !headerOK {
			if ok {
				t.Fatalf("code %d for a frame whose header does not parse", got)
			}
			return
		}
		resp := kmsg.ResponseForKey(key)
		resp.SetVersion(version)
		if resp.ReadFrom(body) != nil {
			return // kmsg refuses it: no answer is wrong, only a panic
		}
		want, wantOK := kmsgGroupError(resp)
		if ok != wantOK || got != want {
			t.Fatalf("%s v%d: GroupResponseErrorCode = %d, %v; kmsg says %d, %v", APIName(key), version, got, ok, want, wantOK)
		}
	})
}
