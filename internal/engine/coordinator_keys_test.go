package engine

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// TestGroupCoordinatorKeysMatchProtocol: every API whose response
// protocol.GroupResponseErrorCode reads is peeked at by the engine. Each
// key's kmsg response, encoded with its defaults and at every version, is
// offered to both; the responses that carry a group error without a group
// or partition in them (heartbeats, joins, ...) must be in the engine's list.
func TestGroupCoordinatorKeysMatchProtocol(t *testing.T) {
	for key := int16(0); key <= wire.MaxKnownKey(); key++ {
		resp := kmsg.ResponseForKey(key)
		if resp == nil {
			continue
		}
		for v := int16(0); v <= resp.MaxVersion(); v++ {
			resp.SetVersion(v)
			frame := protocol.AppendResponseFrame(nil, 1, resp)[protocol.FrameSizeLen:]
			if _, ok := protocol.GroupResponseErrorCode(key, v, frame); ok && !answeredByGroupCoordinator(key) {
				t.Errorf("protocol reads a group error from %s v%d responses; the engine never looks", protocol.APIName(key), v)
			}
		}
	}
}
