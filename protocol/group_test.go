package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestGroupResponseErrorCode(t *testing.T) {
	const code = ErrCodeNotCoordinator
	join := kmsg.NewPtrJoinGroupResponse()
	join.ErrorCode = code
	hb := kmsg.NewPtrHeartbeatResponse()
	hb.ErrorCode = code
	leave := kmsg.NewPtrLeaveGroupResponse()
	leave.ErrorCode = code
	sync := kmsg.NewPtrSyncGroupResponse()
	sync.ErrorCode = code
	cgh := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	cgh.ErrorCode = code
	sgh := kmsg.NewPtrShareGroupHeartbeatResponse()
	sgh.ErrorCode = code
	group := []kmsg.Response{join, hb, leave, sync, cgh, sgh}
	for _, r := range group {
		t.Run(APIName(r.Key()), func(t *testing.T) {
			if got, ok := GroupResponseErrorCode(r); !ok || got != code {
				t.Fatalf("GroupResponseErrorCode = %d, %v; want %d, true", got, ok, code)
			}
		})
	}
	// A group response without an error reports 0, true.
	if got, ok := GroupResponseErrorCode(kmsg.NewPtrHeartbeatResponse()); !ok || got != 0 {
		t.Fatalf("clean heartbeat: %d, %v", got, ok)
	}

	// Responses with a top-level error code that are not group-coordinator
	// membership responses, and one without.
	fc := kmsg.NewPtrFindCoordinatorResponse()
	fc.ErrorCode = code
	dg := kmsg.NewPtrDescribeGroupsResponse()
	oc := kmsg.NewPtrOffsetCommitResponse()
	av := kmsg.NewPtrApiVersionsResponse()
	av.ErrorCode = code
	others := []kmsg.Response{kmsg.NewPtrMetadataResponse(), fc, dg, oc, av, kmsg.NewPtrProduceResponse()}
	for _, r := range others {
		t.Run("not/"+APIName(r.Key()), func(t *testing.T) {
			if got, ok := GroupResponseErrorCode(r); ok || got != 0 {
				t.Fatalf("GroupResponseErrorCode = %d, %v; want 0, false", got, ok)
			}
		})
	}
	if got, ok := GroupResponseErrorCode(nil); ok || got != 0 {
		t.Fatalf("nil: %d, %v", got, ok)
	}
}
