package auth

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"

	kproxysasl "github.com/kproxy/kproxy/sasl"
)

// Mechanisms is the table of SASL mechanisms: the built-in ones and those
// a program added (package sasl). A nil *Mechanisms is the built-in table.
// The configuration is validated against it and the listeners and the
// upstream login run its entries.
type Mechanisms struct {
	server   []ServerMechanism
	upstream []ClientMechanism
}

// NewMechanisms is the built-in table with extra mechanisms after it. An
// extra mechanism must have a valid, unused name.
func NewMechanisms(extra ...kproxysasl.Mechanism) (*Mechanisms, error) {
	t := &Mechanisms{server: builtinServer(), upstream: builtinUpstream()}
	for _, m := range extra {
		if err := m.Check(); err != nil {
			return nil, err
		}
		_, server := t.Server(m.Name)
		_, upstream := t.Upstream(m.Name)
		if server || upstream {
			return nil, fmt.Errorf("mechanism %s: already in the table", m.Name)
		}
		if m.NewSession != nil {
			t.server = append(t.server, programMechanism(m))
		}
		if m.Login != nil {
			t.upstream = append(t.upstream, ClientMechanism{Name: m.Name, Login: LoginProgram, program: m.Login})
		}
	}
	return t, nil
}

// orBuiltin is t, or for nil a fresh built-in table (an Authenticator
// builds it once per connection).
func (t *Mechanisms) orBuiltin() *Mechanisms {
	if t == nil {
		return &Mechanisms{server: builtinServer(), upstream: builtinUpstream()}
	}
	return t
}

// Server is the entry of the mechanism kproxy terminates as name.
func (t *Mechanisms) Server(name string) (ServerMechanism, bool) {
	entries := t.orBuiltin().server
	i := slices.IndexFunc(entries, func(m ServerMechanism) bool { return m.Name == name })
	if i < 0 {
		return ServerMechanism{}, false
	}
	return entries[i], true
}

// ServerNames are the names of the mechanisms kproxy can terminate, in
// table order.
func (t *Mechanisms) ServerNames() []string {
	var names []string
	for _, m := range t.orBuiltin().server {
		names = append(names, m.Name)
	}
	return names
}

// Upstream is the entry of the mechanism kproxy logs in upstream with as
// name.
func (t *Mechanisms) Upstream(name string) (ClientMechanism, bool) {
	entries := t.orBuiltin().upstream
	i := slices.IndexFunc(entries, func(m ClientMechanism) bool { return m.Name == name })
	if i < 0 {
		return ClientMechanism{}, false
	}
	return entries[i], true
}

// UpstreamNames are the names of the mechanisms kproxy can log in
// upstream with, in table order.
func (t *Mechanisms) UpstreamNames() []string {
	var names []string
	for _, m := range t.orBuiltin().upstream {
		names = append(names, m.Name)
	}
	return names
}

// UserFromClientMessage is the table's UserFromClientMessage.
func (t *Mechanisms) UserFromClientMessage(mechanism string, firstClientMsg []byte) (string, error) {
	m, ok := t.Server(mechanism)
	if !ok || m.passthroughUser == nil {
		return "", fmt.Errorf("user from client message: %w: %w %q", ErrUnmappablePrincipal, ErrUnsupportedMechanism, mechanism)
	}
	return m.passthroughUser(firstClientMsg)
}

// OrList spells names for an error message: "A, B or C".
func OrList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Needs is the part of listeners.sasl a server mechanism reads.
type Needs int

const (
	// NeedsNothing: the mechanism brings what it checks against (a
	// program's mechanism).
	NeedsNothing Needs = iota
	// NeedsUsers: listeners.sasl.users and their credentials.
	NeedsUsers
	// NeedsOAuthBearer: listeners.sasl.oauthbearer's token validation.
	NeedsOAuthBearer
)

// ServerMechanism is one mechanism kproxy terminates for its clients.
type ServerMechanism struct {
	Name  string
	Needs Needs
	// TerminateOnly, when set, says why the mechanism cannot be relayed in
	// passthrough mode.
	TerminateOnly string
	// Steps is how many SaslAuthenticate round trips a login takes, for
	// counting passthrough logins; 0: unknown.
	Steps int
	// verifies reports whether a stored credential of the mechanism
	// credential lets a user log in with this one (NeedsUsers).
	verifies func(credential string) bool
	// start begins the server side of one exchange.
	start func(Options) Session
	// passthroughUser reads the broker's principal from a client's first
	// message in passthrough mode (see UserFromClientMessage).
	passthroughUser func(firstClientMsg []byte) (string, error)
}

// Verifies reports whether a user's stored credential for mechanism
// credential lets the user log in with m.
func (m ServerMechanism) Verifies(credential string) bool {
	return m.verifies != nil && m.verifies(credential)
}

// Readable reports whether kproxy reads the broker's principal from the
// mechanism's messages in passthrough mode (UserFromClientMessage).
func (m ServerMechanism) Readable() bool { return m.passthroughUser != nil }

// programMechanism is the table entry of a program's mechanism: kproxy
// terminates it (only the program can read its messages).
func programMechanism(m kproxysasl.Mechanism) ServerMechanism {
	return ServerMechanism{
		Name:          m.Name,
		TerminateOnly: "it is terminated by the program that added it",
		start:         func(Options) Session { return &programSession{name: m.Name, s: m.NewSession()} },
	}
}

// programSession is a program's session as an Authenticator runs it: its
// errors are authentication failures naming the mechanism, and what it
// returns is bounded as the built-in mechanisms' messages are (a token's
// size), so that a session echoing what a client chose cannot make kproxy
// hold more. Every call into the program's code happens in Step, which
// recovers a panic as an authentication failure: one client's exchange
// ends, as net/http ends a request whose handler panics, and kproxy goes
// on serving the others.
type programSession struct {
	name   string
	s      kproxysasl.Session
	user   string
	expiry time.Time
}

func (p *programSession) Step(msg []byte) (out []byte, done bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, done, err = nil, false, failed(p.name, "", fmt.Sprintf("the mechanism's session panicked: %v", v))
		}
	}()
	out, done, err = p.s.Step(msg)
	if err != nil {
		return nil, false, &AuthenticationError{Mechanism: p.name, Reason: err.Error()}
	}
	if len(out) > MaxTokenSize {
		return nil, false, failed(p.name, "", fmt.Sprintf("the mechanism's message of %d bytes exceeds %d", len(out), MaxTokenSize))
	}
	if !done {
		return out, false, nil
	}
	p.user = p.s.User()
	switch {
	case p.user == "":
		return nil, false, failed(p.name, "", "the mechanism authenticated no user")
	case len(p.user) > MaxTokenSize:
		return nil, false, failed(p.name, "", fmt.Sprintf("the mechanism authenticated a user name of %d bytes, over %d", len(p.user), MaxTokenSize))
	}
	if e, ok := p.s.(kproxysasl.Expirer); ok {
		p.expiry = e.Expiry()
	}
	return out, true, nil
}

// User is the user the session authenticated, read in Step.
func (p *programSession) User() string      { return p.user }
func (p *programSession) Mechanism() string { return p.name }

// Expiry is the credential's, when the program's session says (read in
// Step).
func (p *programSession) Expiry() time.Time { return p.expiry }

// UpstreamLogin is how kproxy logs in upstream with a mechanism.
type UpstreamLogin int

const (
	// LoginPassword: upstream.sasl's username and password.
	LoginPassword UpstreamLogin = iota + 1
	// LoginOAuth: a token from upstream.sasl's OAuth client
	// (NewTokenSource).
	LoginOAuth
	// LoginProgram: the program's own client mechanism, which needs no
	// other upstream.sasl key.
	LoginProgram
)

// ClientMechanism is one mechanism kproxy logs in upstream with, as the
// cluster's client.
type ClientMechanism struct {
	Name  string
	Login UpstreamLogin
	// password is the client side of a LoginPassword mechanism.
	password func(user, password string) sasl.Mechanism
	// program is the client side of a LoginProgram mechanism.
	program func() sasl.Mechanism
}

// ProgramLogin is the client side of a LoginProgram mechanism.
func (m ClientMechanism) ProgramLogin() (sasl.Mechanism, error) {
	if m.Login != LoginProgram {
		return nil, fmt.Errorf("upstream SASL: %s is not a program's mechanism", m.Name)
	}
	mech := m.program()
	if mech == nil || mech.Name() != m.Name {
		return nil, fmt.Errorf("upstream SASL: the Login of mechanism %s returned no client mechanism of that name", m.Name)
	}
	return mech, nil
}
