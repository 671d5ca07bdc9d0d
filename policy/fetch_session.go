package policy

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// Fetch sessions (KIP-227) under a policy.
//
// An incremental fetch names only the partitions that changed; the broker
// serves the rest of its session unnamed, and nothing ties a session to the
// principal that opened it. So with a policy in force kproxy lets no fetch
// session exist: every consumer fetch is forwarded as a sessionless full
// fetch (session id 0, epoch -1, KIP-227's form for clients that want no
// session), the broker answers session id 0, and the client keeps sending
// full fetches, every partition of which is authorized under the policy in
// force at that request. A request that names a session (an incremental
// epoch, whether a hijack of another client's session or the client's own
// session from before the policy) is answered FETCH_SESSION_ID_NOT_FOUND,
// after which Kafka's clients send a full fetch. No state is kept, so this
// holds across reloads, audit to enforce, and kproxy replicas.
const (
	sessionlessID    = int32(0)  // KIP-227 INVALID_SESSION_ID
	sessionlessEpoch = int32(-1) // KIP-227 FINAL_EPOCH: full fetch, no session
	initialEpoch     = int32(0)  // KIP-227 INITIAL_EPOCH: full fetch, new session
	fetchSessionsV   = int16(7)  // the first Fetch version with sessions
)

// namesFetchSession reports whether r asks the broker to serve partitions
// of an existing session it does not list: any epoch but the two full-fetch
// ones.
func namesFetchSession(r *kmsg.FetchRequest) bool {
	return r.Version >= fetchSessionsV && r.SessionEpoch != initialEpoch && r.SessionEpoch != sessionlessEpoch
}

// makeSessionless turns a full fetch into a sessionless one and reports
// whether it changed r. A full fetch that names a session id would close
// that session on the broker, which is not this client's to close (the
// broker evicts an abandoned session of its own accord).
func makeSessionless(r *kmsg.FetchRequest) bool {
	if r.Version < fetchSessionsV || (r.SessionID == sessionlessID && r.SessionEpoch == sessionlessEpoch) {
		return false
	}
	r.SessionID, r.SessionEpoch = sessionlessID, sessionlessEpoch
	return true
}

// refuseFetchSession answers a fetch that names a session, as a broker
// answers a session it does not know: top-level FETCH_SESSION_ID_NOT_FOUND,
// no partitions, session id 0. Both franz-go and Kafka's Java client then
// send a full fetch (franz-go, seeing session id 0 answered to that, stops
// asking for sessions on this connection's broker altogether). It is not a
// denial and is not audited: nothing the client may not read was asked for
// by name, and the full fetch that follows is decided and audited.
func refuseFetchSession(c *reqCtx, r *kmsg.FetchRequest) filter.Verdict {
	c.e.log.Debug().Int32("session_id", r.SessionID).Int32("session_epoch", r.SessionEpoch).
		Str("client_id", c.prin.ClientID).Stringer("client", c.client).
		Msg("fetch names a fetch session; kproxy keeps none under a policy: answered FETCH_SESSION_ID_NOT_FOUND")
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
	resp.SessionID = sessionlessID
	return filter.Verdict{Respond: resp}
}
