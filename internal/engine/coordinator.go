package engine

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/labels"
	"github.com/kproxy/kproxy/protocol"
)

// newCoordinatorErrors registers kproxy_group_coordinator_errors_total.
func newCoordinatorErrors(reg prometheus.Registerer) *prometheus.CounterVec {
	c := newCounterVec("kproxy_group_coordinator_errors_total",
		"Upstream group responses carrying NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or COORDINATOR_LOAD_IN_PROGRESS, by API and error, streamed ones included.", labels.API, labels.Error)
	reg.MustRegister(c)
	return c
}

// noteCoordinatorError counts a coordinator error in the upstream response
// to owed, whose frame of frameLen bytes starts in down's read buffer and
// has not been consumed yet. It reads the error field in place (a peek, no
// decode), so the response can still be streamed; only responses of the
// APIs a group coordinator answers are looked at.
func (p *pair) noteCoordinatorError(owed *pending, down *direction, frameLen int) {
	if !answeredByGroupCoordinator(owed.key) {
		return
	}
	head, err := down.r.Peek(min(frameLen, down.r.Size()))
	if err != nil && len(head) < protocol.FrameSizeLen {
		return // relaying the frame meets the same error
	}
	code, ok := protocol.GroupResponseErrorCode(owed.key, owed.version, head[protocol.FrameSizeLen:])
	if !ok {
		return
	}
	if name := coordinatorErrorName(code); name != "" {
		p.s.metrics.coordinatorErrors.WithLabelValues(protocol.APIName(owed.key), name).Inc()
	}
}

// coordinatorErrorName is code's Kafka name if it is one of the errors a
// client answers by looking its group coordinator up again or waiting for
// it, else "". Their rate shows coordinators moving (broker restarts,
// leadership of __consumer_offsets partitions changing).
func coordinatorErrorName(code int16) string {
	switch code {
	case kerr.CoordinatorLoadInProgress.Code:
		return kerr.CoordinatorLoadInProgress.Message
	case kerr.CoordinatorNotAvailable.Code:
		return kerr.CoordinatorNotAvailable.Message
	case kerr.NotCoordinator.Code:
		return kerr.NotCoordinator.Message
	}
	return ""
}

// answeredByGroupCoordinator reports whether key is one of the APIs
// protocol.GroupResponseErrorCode reads: the check that keeps every other
// response (Produce, Fetch) from being peeked at.
func answeredByGroupCoordinator(key int16) bool {
	switch kmsg.Key(key) {
	case kmsg.JoinGroup, kmsg.SyncGroup, kmsg.Heartbeat, kmsg.LeaveGroup, kmsg.OffsetDelete,
		kmsg.ConsumerGroupHeartbeat, kmsg.ShareGroupHeartbeat, kmsg.StreamsGroupHeartbeat,
		kmsg.AlterShareGroupOffsets, kmsg.DeleteShareGroupOffsets,
		kmsg.DescribeGroups, kmsg.DeleteGroups, kmsg.ConsumerGroupDescribe, kmsg.ShareGroupDescribe,
		kmsg.StreamsGroupDescribe, kmsg.OffsetFetch, kmsg.OffsetCommit, kmsg.TxnOffsetCommit:
		return true
	}
	return false
}
