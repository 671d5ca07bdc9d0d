package engine

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// Fetch sessions (KIP-227) belong to a connection.
//
// A broker keeps a fetch session by its id alone: any connection naming
// the id, at the session's next epoch, is served the session's partitions,
// records included, without listing them. Behind kproxy every client
// connection has an upstream connection of its own, so a session id the
// broker gave to one client connection is, for kproxy, that connection's:
// no other may use it, whatever tenant, principal or policy it has.
//
// Every connection therefore remembers the session ids the broker gave it
// (read from the Fetch responses to its requests that asked for one), and
// a Fetch naming any other id is handled before filters see it:
//
//   - at an incremental epoch (anything but 0 and -1), it is answered in
//     the broker's place exactly as the broker answers an id it does not
//     know: top-level FETCH_SESSION_ID_NOT_FOUND, session id 0, no
//     partitions. Whether the id is live elsewhere (which the broker would
//     betray with INVALID_FETCH_SESSION_EPOCH) never shows;
//   - at epoch 0 (close it and open a new session) or -1 (close it, fetch
//     without a session) it is forwarded with the id cleared, which asks
//     the broker for the same thing minus closing a session that is not
//     this connection's.
//
// The fields sit at fixed places in the first bytes of the body: they are
// read, and the id cleared, in the request loop's read buffer; nothing is
// decoded, and a Fetch that names no foreign session is streamed as before.

// ownFetchSessions is how many of the session ids the broker gave a
// connection it remembers, newest first. A client keeps one session per
// broker connection; a few more allow for one it replaced by a new one
// while an older request was in flight.
const ownFetchSessions = 4

// fetchSessionGuard holds the fetch session ids the broker gave this
// connection. The response loop learns them, the request loop reads them.
type fetchSessionGuard struct {
	ids  [ownFetchSessions]atomic.Int32
	next int // response loop only: the slot the next id replaces
}

// owns reports whether the broker gave this connection session id.
func (g *fetchSessionGuard) owns(id int32) bool {
	for i := range g.ids {
		if g.ids[i].Load() == id {
			return true
		}
	}
	return false
}

// learn remembers id, the broker's session id in a response to this
// connection, replacing the oldest one remembered.
func (g *fetchSessionGuard) learn(id int32) {
	if id == 0 || g.owns(id) {
		return
	}
	g.ids[g.next].Store(id)
	g.next = (g.next + 1) % ownFetchSessions
}

// guardFetchSession applies the rule above to the Fetch request r whose
// header is h and whose body starts with bodyPrefix (cr's buffer, where a
// foreign session id is cleared in place). It answers r (owed.local) for a
// foreign incremental session, and marks r to learn the session id of its
// response when r asks the broker for a new session.
func (p *pair) guardFetchSession(h protocol.RequestHeader, bodyPrefix []byte, r *clientRequest) error {
	if h.APIVersion < wire.FetchSessionsVersion {
		return nil
	}
	id, epoch, ok := wire.FetchRequestSession(h.APIVersion, bodyPrefix)
	if !ok {
		if r.frameLen-protocol.FrameSizeLen-h.Len < wire.FetchRequestSessionOffset(h.APIVersion)+8 {
			return nil // names no session at all: the broker refuses it as malformed
		}
		// Only a header filling the read buffer pushes them out of it.
		return fail(reasonProtocol, fmt.Errorf("client Fetch request: its session fields lie beyond the first %d bytes read; refusing to forward a session kproxy cannot check", readBufSize))
	}
	if epoch == 0 {
		r.owed.peek = responsePeek{read: (*pair).learnFetchSession}
	}
	if id == 0 || p.fetchSessions.owns(id) {
		return nil
	}
	log := p.logger().Debug().Int32("session_id", id).Int32("session_epoch", epoch).Str("client_id", p.conn.ClientID)
	if epoch != 0 && epoch != -1 {
		log.Msg("fetch names a fetch session this connection did not open: answered FETCH_SESSION_ID_NOT_FOUND, as for an unknown id")
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(h.APIVersion)
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		p.answerLocally(&r.owed, h.CorrelationID, resp)
		return nil
	}
	log.Msg("full fetch names a fetch session this connection did not open: forwarded without it, so that session stays open")
	binary.BigEndian.PutUint32(bodyPrefix[wire.FetchRequestSessionOffset(h.APIVersion):], 0)
	return nil
}

// learnFetchSession reads the session id of the Fetch response to owed, a
// request that asked for a new session, from down's read buffer before the
// frame of frameLen bytes is relayed, and remembers it. A response whose
// header carries tagged fields beyond fetchHeadLen (no broker sends any)
// opens no session for kproxy: the client's next incremental fetch is
// answered FETCH_SESSION_ID_NOT_FOUND and it falls back to full fetches.
func (p *pair) learnFetchSession(owed *pending, down *direction, frameLen int) {
	head, err := down.r.Peek(min(frameLen, fetchHeadLen))
	if err != nil {
		return // relaying the frame meets the same error
	}
	body, err := wire.SkipResponseHeader(owed.key, owed.version, head[protocol.FrameSizeLen:])
	if err != nil {
		return
	}
	if _, id, err := wire.FetchResponseSession(owed.version, body); err == nil {
		p.fetchSessions.learn(id)
	}
}
