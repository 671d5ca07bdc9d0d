// Package sasl lets a Go program running kproxy (package proxy) add SASL
// mechanisms that kproxy terminates for its clients, next to the ones it
// has: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER.
//
// A Mechanism passed in proxy.Options.Mechanisms may be listed in
// listeners.sasl.mechanisms (mode terminate) like a built-in one, and, if
// it has a Login, named by upstream.sasl.mechanism for kproxy's own login
// to the cluster:
//
//	err := proxy.Run(ctx, proxy.Options{
//		ConfigPath: "kproxy.yaml", // listeners.sasl.mechanisms: [X-KPROXY-TOKEN]
//		Mechanisms: []sasl.Mechanism{{Name: "X-KPROXY-TOKEN", NewSession: newTokenSession}},
//	})
//
// kproxy speaks SaslHandshake and SaslAuthenticate (every version, the
// unframed tokens after a v0 handshake, KIP-368 re-authentication and
// listeners.sasl.session_lifetime) around the mechanism's Session; the
// Session only judges the client's messages. The user it authenticates is
// the connection's principal, User:<user> in policy rules and logs.
package sasl

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
)

// Mechanism is one SASL mechanism kproxy terminates.
type Mechanism struct {
	// Name is what clients ask for in SaslHandshake: 1 to 20 characters
	// of A-Z, 0-9, '-' and '_' (RFC 4422's mechanism names). It must not
	// be a built-in mechanism's name.
	Name string
	// NewSession starts the server side of one client's exchange; kproxy
	// calls it at each SaslHandshake naming the mechanism, including a
	// re-authentication's. Nil: kproxy does not terminate the mechanism.
	NewSession func() Session
	// Login, when set, is kproxy's own login to the cluster with the
	// mechanism, for upstream.sasl.mechanism naming it (and no other
	// upstream.sasl key): the franz-go client side, which kproxy runs on
	// every upstream connection it opens, relayed or its own.
	Login func() sasl.Mechanism
}

// Session is the server side of one SASL exchange, used by one connection
// at a time.
//
// Step takes the client's next message and returns the answer to send.
// done is true, with a nil error, once the client is authenticated
// (serverMsg is then the last message, possibly empty). A non-nil error
// ends the exchange: the client gets SASL_AUTHENTICATION_FAILED with a
// message naming the mechanism only, the error goes to kproxy's log (so it
// must not hold a secret), and the connection closes.
//
// The client chooses what Step is given, so Step must not trust it. kproxy
// bounds what a client may send and what Step may answer to a token's size
// (512 KiB, Kafka's sasl.server.max.receive.size), as for the built-in
// mechanisms: a longer serverMsg or User fails the login. A panic in Step
// (or User, or Expiry) fails that client's login with the panic in kproxy's
// log, and kproxy goes on serving, as net/http does for a handler. Step
// should return promptly: the client is closed at limits.handshake_timeout
// whatever Step does, but a Step that never returns keeps its connection's
// place under limits.max_handshakes until it does.
//
// A Session may also have a method Expiry() time.Time: a non-zero expiry
// of the credential it authenticated ends the session then (KIP-368: the
// client is told to re-authenticate before), or earlier when
// listeners.sasl.session_lifetime says so.
type Session interface {
	Step(clientMsg []byte) (serverMsg []byte, done bool, err error)
	// User is the authenticated user once Step has returned done; a
	// re-authentication must authenticate the same user.
	User() string
}

// Expirer is the optional method of a Session whose credential expires.
type Expirer interface {
	Expiry() time.Time
}

// maxNameLen is RFC 4422's limit on a mechanism name.
const maxNameLen = 20

// Check reports what is wrong with m, naming its field.
func (m Mechanism) Check() error {
	if m.Name == "" || len(m.Name) > maxNameLen {
		return fmt.Errorf("mechanism name %q: must have 1 to %d characters", m.Name, maxNameLen)
	}
	for i := range len(m.Name) {
		if c := m.Name[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("mechanism name %q: only A-Z, 0-9, '-' and '_' are allowed", m.Name)
		}
	}
	if m.NewSession == nil && m.Login == nil {
		return errors.New("mechanism " + m.Name + ": neither NewSession nor Login is set")
	}
	return nil
}
