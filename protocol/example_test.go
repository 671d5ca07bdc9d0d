package protocol_test

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/protocol"
)

// A proxy relaying a group coordinator's response reads its error in
// place, from the frame's bytes, and leaves the frame as it is.
func ExampleGroupResponseErrorCode() {
	// What a broker sends: a Heartbeat v4 response, NOT_COORDINATOR.
	resp := kmsg.NewPtrHeartbeatResponse()
	resp.SetVersion(4)
	resp.ErrorCode = kerr.NotCoordinator.Code
	wire := protocol.AppendResponseFrame(nil, 42, resp)

	size, err := protocol.ParseFrameSize(wire, 1<<20)
	if err != nil {
		panic(err)
	}
	frame := wire[protocol.FrameSizeLen : protocol.FrameSizeLen+int(size)]
	code, ok := protocol.GroupResponseErrorCode(int16(kmsg.Heartbeat), 4, frame)
	fmt.Println(ok, kerr.ErrorForCode(code))

	body, _ := protocol.SkipResponseHeader(int16(kmsg.Heartbeat), 4, frame)
	decoded, err := protocol.DecodeResponse(int16(kmsg.Heartbeat), 4, body)
	if err != nil {
		panic(err)
	}
	fmt.Println(decoded.(*kmsg.HeartbeatResponse).ErrorCode == code)
	// Output:
	// true NOT_COORDINATOR: This is not the correct coordinator.
	// true
}

// Parsing a client's request frame into its header and kmsg request.
func ExampleDecodeRequest() {
	req := kmsg.NewPtrHeartbeatRequest()
	req.SetVersion(4)
	req.Group, req.MemberID = "orders", "member-1"
	wire := protocol.AppendRequestFrame(nil, protocol.RequestHeader{CorrelationID: 7, ClientID: "app"}, req)

	frame := wire[protocol.FrameSizeLen:]
	h, clientID, err := protocol.PeekRequestHeader(frame)
	if err != nil {
		panic(err)
	}
	parsed, err := protocol.DecodeRequest(h.APIKey, h.APIVersion, frame[h.Len:])
	if err != nil {
		panic(err)
	}
	fmt.Println(protocol.APIName(h.APIKey), h.APIVersion, h.CorrelationID, string(clientID), parsed.(*kmsg.HeartbeatRequest).Group)
	// Output: Heartbeat 4 7 app orders
}
