package protocol

import "github.com/twmb/franz-go/pkg/kmsg"

// GroupResponseErrorCode returns the top-level error code of a response from
// a group coordinator (JoinGroup, Heartbeat, LeaveGroup, SyncGroup,
// ConsumerGroupHeartbeat, ShareGroupHeartbeat, StreamsGroupHeartbeat), and false for any other
// response. NOT_COORDINATOR here means the client is about to look the
// coordinator up again through FindCoordinator.
func GroupResponseErrorCode(resp kmsg.Response) (ErrorCode, bool) {
	switch r := resp.(type) {
	case *kmsg.JoinGroupResponse:
		return r.ErrorCode, true
	case *kmsg.HeartbeatResponse:
		return r.ErrorCode, true
	case *kmsg.LeaveGroupResponse:
		return r.ErrorCode, true
	case *kmsg.SyncGroupResponse:
		return r.ErrorCode, true
	case *kmsg.ConsumerGroupHeartbeatResponse:
		return r.ErrorCode, true
	case *kmsg.ShareGroupHeartbeatResponse:
		return r.ErrorCode, true
	case *kmsg.StreamsGroupHeartbeatResponse:
		return r.ErrorCode, true
	}
	return 0, false
}
