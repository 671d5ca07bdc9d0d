package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// Share sessions (KIP-932) belong to a connection too.
//
// A broker keys a share session by group id and member id alone, and a
// member id is no secret (ShareGroupDescribe shows it). A connection
// naming another member's session at its epoch would acquire records
// meant for that member, acknowledge (even reject) records it holds, or
// close its session. As for fetch sessions (fetchsession.go), a
// connection may use only the share sessions the broker opened for it: a
// ShareFetch or ShareAcknowledge at any epoch but 0 naming a group and
// member for which this connection's own ShareFetch at epoch 0 was not
// answered without error is answered SHARE_SESSION_NOT_FOUND, as the
// broker answers a session it does not know, and never forwarded. A share
// consumer then opens a session of its own (epoch 0).
//
// Across virtual clusters group ids carry distinct prefixes (an empty or
// overlapping one is refused at load), so a tenant cannot even name
// another tenant's session; this guard holds between the connections of
// one tenant or of a cluster without tenants.

// ownShareSessions is how many share sessions a connection may hold: one
// per share consumer sharing it, with room for sessions it replaced.
const ownShareSessions = 16

// shareSessionGuard holds the share sessions (group id, member id) the
// broker opened for this connection. The response loop learns them, the
// request loop reads them; ShareFetch and ShareAcknowledge only.
type shareSessionGuard struct {
	mu   sync.Mutex
	keys []string // oldest first
}

// shareSessionKey is the guard's key of a group id and member id.
func shareSessionKey(group, member []byte) string {
	return string(group) + "\x00" + string(member)
}

// owns reports whether the broker opened the share session of group and
// member for this connection.
func (g *shareSessionGuard) owns(group, member []byte) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range g.keys {
		if len(k) == len(group)+1+len(member) && k[:len(group)] == string(group) && k[len(group)+1:] == string(member) {
			return true
		}
	}
	return false
}

// learn remembers key, forgetting the oldest beyond ownShareSessions.
func (g *shareSessionGuard) learn(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range g.keys {
		if k == key {
			return
		}
	}
	if len(g.keys) == ownShareSessions {
		g.keys = append(g.keys[:0], g.keys[1:]...)
	}
	g.keys = append(g.keys, key)
}

// guardShareSession applies the rule above to the ShareFetch or
// ShareAcknowledge request r whose header is h and whose body starts with
// bodyPrefix: it answers r (owed.local) when it names a session this
// connection does not hold, and marks a ShareFetch opening one to learn
// it from its response.
func (p *pair) guardShareSession(h protocol.RequestHeader, bodyPrefix []byte, r *clientRequest) error {
	group, member, epoch, err := wire.ShareSession(bodyPrefix)
	if err != nil {
		if errors.Is(err, protocol.ErrShortBuffer) && r.frameLen-protocol.FrameSizeLen-h.Len > len(bodyPrefix) {
			return fail(reasonProtocol, fmt.Errorf("client %s request: its share session fields lie beyond the first %d bytes read; refusing to forward a session kproxy cannot check",
				protocol.APIName(h.APIKey), readBufSize))
		}
		return nil // malformed: the broker (or the name mapper) refuses it
	}
	if epoch == 0 {
		if h.APIKey == wire.ShareFetchKey {
			r.owed.peek = responsePeek{read: (*pair).learnShareSession, arg: shareSessionKey(group, member)}
		}
		return nil
	}
	if p.shareSessions.owns(group, member) {
		return nil
	}
	p.logger().Debug().Str("api", protocol.APIName(h.APIKey)).Int32("share_session_epoch", epoch).Str("client_id", p.conn.ClientID).
		Msg("request names a share session this connection did not open: answered SHARE_SESSION_NOT_FOUND, as for an unknown session")
	var resp kmsg.Response
	switch h.APIKey {
	case wire.ShareFetchKey:
		sr := kmsg.NewPtrShareFetchResponse()
		sr.ErrorCode = kerr.ShareSessionNotFound.Code
		resp = sr
	default:
		sr := kmsg.NewPtrShareAcknowledgeResponse()
		sr.ErrorCode = kerr.ShareSessionNotFound.Code
		resp = sr
	}
	resp.SetVersion(h.APIVersion)
	p.answerLocally(&r.owed, h.CorrelationID, resp)
	return nil
}

// learnShareSession reads the top-level error code of the ShareFetch
// response to owed, a request that opened a share session, from down's
// read buffer before the frame of frameLen bytes is relayed, and
// remembers the session when the broker opened it.
func (p *pair) learnShareSession(owed *pending, down *direction, frameLen int) {
	const off = wire.ShareResponseErrorOffset
	if frameLen < off+2 {
		return
	}
	head, err := down.r.Peek(off + 2)
	if err != nil || head[off-5] != 0 { // a header with tagged fields: no broker sends one
		return
	}
	if binary.BigEndian.Uint16(head[off:]) == 0 {
		p.shareSessions.learn(owed.peek.arg)
	}
}
