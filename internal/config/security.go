package config

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/tlsconfig"
)

// Defaults of the security keys.
const (
	DefaultHandshakeTimeout = 10 * time.Second
	SASLModeTerminate       = "terminate"
	SASLModePassthrough     = "passthrough"
)

// DefaultSASLMechanisms are enabled when listeners.sasl.mechanisms is left
// out. PLAIN is not among them: it sends the password itself, so it must
// be asked for (and should only be used behind TLS).
func DefaultSASLMechanisms() []string { return []string{auth.ScramSHA512, auth.ScramSHA256} }

// ListenerTLS is listeners.tls: kproxy's listeners speak TLS when set.
// The key pair and the client CA bundle are reloaded when their files
// change.
type ListenerTLS struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// ClientAuth is none (default), request (verify a certificate if the
	// client sends one) or require.
	ClientAuth   string `yaml:"client_auth"`
	ClientCAFile string `yaml:"client_ca_file"`
	// PrincipalFrom names clients by their certificate: cn, san:dns,
	// san:email or san:uri (the first such SAN). Empty: certificates do
	// not name the client.
	PrincipalFrom string `yaml:"principal_from"`
}

// ListenerSASL is listeners.sasl: clients must authenticate with SASL.
type ListenerSASL struct {
	// Mode is terminate (default: kproxy verifies clients against Users and
	// logs in upstream with upstream.sasl, if any) or passthrough (the
	// exchange is relayed to the upstream, which verifies it).
	Mode string `yaml:"mode"`
	// Mechanisms enabled for clients; see DefaultSASLMechanisms.
	Mechanisms []string `yaml:"mechanisms"`
	// SessionLifetime, when set (terminate mode), ends every client's SASL
	// session that long after each (re-)authentication, as Kafka's
	// connections.max.reauth.ms: clients that support KIP-368 are told
	// and re-authenticate; others are closed at their next request.
	SessionLifetime time.Duration `yaml:"session_lifetime"`
	Users           []SASLUser    `yaml:"users"`
	// OAuthBearer validates OAUTHBEARER tokens; required when mechanisms
	// lists OAUTHBEARER, which terminate mode alone supports.
	OAuthBearer *OAuthBearer `yaml:"oauthbearer"`
}

// SASLUser is one entry of listeners.sasl.users.
type SASLUser struct {
	Name string `yaml:"name"`
	// Credentials are salted SCRAM credentials from `kproxy hash-password`,
	// at most one per SCRAM mechanism; PLAIN logins are checked against
	// them too. Passwords are never written in the file.
	Credentials []string `yaml:"credentials"`
}

// UpstreamTLS is upstream.tls: kproxy reaches the brokers over TLS.
type UpstreamTLS struct {
	// CAFile is the PEM bundle of CAs to trust; empty: the system roots.
	CAFile string `yaml:"ca_file"`
	// ServerName overrides the name verified; empty: each broker's host.
	ServerName string `yaml:"server_name"`
	// CertFile and KeyFile, both or neither: a client certificate.
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// InsecureSkipVerify trusts any certificate: for tests only.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
}

// UpstreamSASL is upstream.sasl: kproxy's own login to the brokers. With
// PLAIN and SCRAM, username and a password given in exactly one of three
// ways (password_file and password_env keep it out of the configuration
// file). With OAUTHBEARER, an OAuth client (client-credentials grant at
// token_endpoint) whose secret is likewise given in exactly one way.
type UpstreamSASL struct {
	Mechanism    string `yaml:"mechanism"`
	Username     string `yaml:"username"`
	Password     string `yaml:"password"`
	PasswordFile string `yaml:"password_file"`
	PasswordEnv  string `yaml:"password_env"`

	// OAUTHBEARER only.
	TokenEndpoint    string `yaml:"token_endpoint"`
	ClientID         string `yaml:"client_id"`
	ClientSecret     string `yaml:"client_secret"`
	ClientSecretFile string `yaml:"client_secret_file"`
	ClientSecretEnv  string `yaml:"client_secret_env"`
	// Scope is sent as the token request's scope parameter (space-separated
	// scopes); empty: none sent.
	Scope string `yaml:"scope"`
	// TokenTimeout bounds one token request; default 10s.
	TokenTimeout time.Duration `yaml:"token_timeout"`
	// TokenEndpointCAFile is a PEM bundle of the CAs trusted for
	// token_endpoint instead of the system roots.
	TokenEndpointCAFile string `yaml:"token_endpoint_ca_file"`

	// table is the configuration's SASL mechanism table; nil: the
	// built-in one.
	table *auth.Mechanisms
}

// Entry is the mechanism table's entry for u's mechanism: how kproxy
// logs in with it.
func (u *UpstreamSASL) Entry() (auth.ClientMechanism, bool) { return u.table.Upstream(u.Mechanism) }

// OAuth reports whether kproxy logs in with OAUTHBEARER.
func (u *UpstreamSASL) OAuth() bool { m, _ := u.Entry(); return m.Login == auth.LoginOAuth }

// ConnectionLimits are the limits keys about accepting connections. They
// live directly under limits (embedded inline in Limits).
type ConnectionLimits struct {
	// HandshakeTimeout bounds the TLS handshake and SASL authentication of
	// a new client connection.
	HandshakeTimeout time.Duration `yaml:"handshake_timeout"`
	// MaxConnections caps open client connections; 0: no cap.
	MaxConnections int `yaml:"max_connections"`
	// MaxConnectionsPerIP caps open client connections from one address;
	// 0: no cap.
	MaxConnectionsPerIP int `yaml:"max_connections_per_ip"`
	// MaxHandshakes caps connections still in their handshake (PROXY
	// header, TLS, SASL) at once; 0: DefaultMaxHandshakes.
	MaxHandshakes int `yaml:"max_handshakes"`
}

// DefaultMaxHandshakes is limits.max_handshakes when it is not set: room
// for a reconnection storm of a large fleet, not for thousands of peers
// holding half-written handshakes.
const DefaultMaxHandshakes = 1000

// HandshakeLimit is limits.max_handshakes, or its default.
func (l ConnectionLimits) HandshakeLimit() int {
	if l.MaxHandshakes > 0 {
		return l.MaxHandshakes
	}
	return DefaultMaxHandshakes
}

// Security gathers the security sections, wherever they sit in Config,
// so that their defaults and cross-checks live in one place. Nil means
// the section is absent.
type Security struct {
	// Mechanisms is the SASL mechanism table; nil: the built-in one.
	Mechanisms   *auth.Mechanisms
	ListenerTLS  *ListenerTLS
	ListenerSASL *ListenerSASL
	UpstreamTLS  *UpstreamTLS
	UpstreamSASL *UpstreamSASL
	Limits       *ConnectionLimits
}

// applyDefaults fills keys left out of present sections.
func (s *Security) applyDefaults() {
	if t := s.ListenerTLS; t != nil && t.ClientAuth == "" {
		t.ClientAuth = tlsconfig.ClientAuthNone
	}
	if l := s.ListenerSASL; l != nil {
		if l.Mode == "" {
			l.Mode = SASLModeTerminate
		}
		if len(l.Mechanisms) == 0 {
			l.Mechanisms = DefaultSASLMechanisms()
		}
		if l.OAuthBearer != nil {
			l.OAuthBearer.applyDefaults()
		}
	}
	if s.Limits != nil && s.Limits.HandshakeTimeout == 0 {
		s.Limits.HandshakeTimeout = DefaultHandshakeTimeout
	}
}

// validate checks every security key, after applyDefaults, and returns one
// error per problem, each starting with the key it is about. It reads no
// files: those are read, with errors naming them, at start-up and by
// kproxy validate (unless --skip-file-checks).
func (s *Security) validate() []error {
	var errs []error
	if t := s.ListenerTLS; t != nil {
		errs = append(errs, t.validate("listeners.tls")...)
	}
	if l := s.ListenerSASL; l != nil {
		errs = append(errs, l.validate("listeners.sasl", s.Mechanisms)...)
		if l.Mode == SASLModePassthrough && s.UpstreamSASL != nil {
			errs = append(errs, fmt.Errorf("upstream.sasl: not allowed with listeners.sasl.mode %s: each client's own login is relayed upstream", SASLModePassthrough))
		}
	}
	if t := s.UpstreamTLS; t != nil {
		errs = append(errs, t.validate("upstream.tls")...)
	}
	if u := s.UpstreamSASL; u != nil {
		errs = append(errs, u.validate("upstream.sasl", s.Mechanisms)...)
	}
	if l := s.Limits; l != nil {
		errs = append(errs, l.validate("limits")...)
	}
	return errs
}

func (t *ListenerTLS) validate(key string) []error {
	var errs []error
	bad := func(k, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", key, k, fmt.Sprintf(format, args...)))
	}
	if t.CertFile == "" {
		bad("cert_file", "required: the PEM certificate (chain) the listeners serve")
	}
	if t.KeyFile == "" {
		bad("key_file", "required: the PEM private key of cert_file")
	}
	verifies := false
	switch t.ClientAuth {
	case tlsconfig.ClientAuthNone:
	case tlsconfig.ClientAuthRequest, tlsconfig.ClientAuthRequire:
		verifies = true
	default:
		bad("client_auth", "%q: must be none, request or require", t.ClientAuth)
	}
	switch {
	case verifies && t.ClientCAFile == "":
		bad("client_ca_file", "required when client_auth is %s: the PEM bundle client certificates are verified against", t.ClientAuth)
	case t.ClientAuth == tlsconfig.ClientAuthNone && t.ClientCAFile != "":
		bad("client_ca_file", "set but client_auth is none, so no client certificate is asked for; set client_auth to request or require")
	}
	if t.PrincipalFrom != "" {
		if !slices.Contains(auth.PrincipalRules(), t.PrincipalFrom) {
			bad("principal_from", "%q: must be one of cn, san:dns, san:email, san:uri", t.PrincipalFrom)
		} else if !verifies {
			bad("principal_from", "needs client_auth request or require: without a verified certificate there is no principal")
		}
	}
	return errs
}

func (l *ListenerSASL) validate(key string, table *auth.Mechanisms) []error {
	var errs []error
	bad := func(k, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s%s: %s", key, k, fmt.Sprintf(format, args...)))
	}
	switch l.Mode {
	case SASLModeTerminate, SASLModePassthrough:
	default:
		bad(".mode", "%q: must be terminate or passthrough", l.Mode)
	}
	enabled := map[string]bool{}
	needs := map[auth.Needs]bool{}
	var verifiers []auth.ServerMechanism
	for i, name := range l.Mechanisms {
		m, known := table.Server(name)
		switch {
		case !known:
			bad(fmt.Sprintf(".mechanisms[%d]", i), "%q: must be %s (names are upper case)", name, auth.OrList(table.ServerNames()))
		case m.TerminateOnly != "" && l.Mode == SASLModePassthrough:
			bad(fmt.Sprintf(".mechanisms[%d]", i), "%s needs mode terminate: %s", name, m.TerminateOnly)
		case enabled[name]:
			bad(fmt.Sprintf(".mechanisms[%d]", i), "%s listed twice", name)
		}
		enabled[name] = true
		if known {
			needs[m.Needs] = true
		}
		if known && m.Needs == auth.NeedsUsers {
			verifiers = append(verifiers, m)
		}
	}
	if l.SessionLifetime < 0 || (l.SessionLifetime > 0 && l.SessionLifetime < time.Second) {
		bad(".session_lifetime", "%s: must be 0 (sessions never expire) or at least 1s", l.SessionLifetime)
	}
	switch {
	case needs[auth.NeedsOAuthBearer] && l.OAuthBearer == nil:
		bad(".oauthbearer", "required when mechanisms lists OAUTHBEARER: at least jwks_url (or jwks_file) and issuer")
	case !needs[auth.NeedsOAuthBearer] && l.OAuthBearer != nil:
		bad(".oauthbearer", "set but mechanisms does not list OAUTHBEARER; add it or remove this section")
	case l.OAuthBearer != nil:
		errs = append(errs, l.OAuthBearer.validate(key+".oauthbearer")...)
	}
	if l.Mode == SASLModePassthrough {
		if len(l.Users) > 0 {
			bad(".users", "not used in passthrough mode, where the upstream verifies clients; remove them or set mode: terminate")
		}
		if l.SessionLifetime != 0 {
			bad(".session_lifetime", "not used in passthrough mode, where the upstream sets the session lifetime")
		}
		return errs
	}
	if l.Mode == SASLModeTerminate && len(l.Users) == 0 && needs[auth.NeedsUsers] {
		bad(".users", "required in terminate mode with PLAIN or SCRAM: at least one user with credentials from `kproxy hash-password`")
	}
	names := map[string]int{}
	for i, u := range l.Users {
		ukey := fmt.Sprintf(".users[%d]", i)
		if err := auth.ValidUserName(u.Name); err != nil {
			bad(ukey+".name", "%v", err)
		} else if j, dup := names[u.Name]; dup {
			bad(ukey+".name", "%q already defined at users[%d]", u.Name, j)
		} else {
			names[u.Name] = i
		}
		if len(u.Credentials) == 0 {
			bad(ukey+".credentials", "required: run `kproxy hash-password` to make one")
			continue
		}
		have := map[string]bool{}
		for j, text := range u.Credentials {
			ckey := fmt.Sprintf("%s.credentials[%d]", ukey, j)
			c, err := auth.ParseCredential(text)
			if err != nil {
				// err never repeats the value, which is secret-equivalent.
				bad(ckey, "%v; run `kproxy hash-password`", err)
				continue
			}
			if have[c.Mechanism] {
				bad(ckey, "a second %s credential; keep one per mechanism", c.Mechanism)
			}
			have[c.Mechanism] = true
		}
		if len(have) > 0 && !slices.ContainsFunc(verifiers, func(m auth.ServerMechanism) bool {
			return slices.ContainsFunc(slices.Collect(maps.Keys(have)), m.Verifies)
		}) {
			bad(ukey+".credentials", "none is for an enabled mechanism (%v), so user %q cannot log in", l.Mechanisms, u.Name)
		}
	}
	return errs
}

func (t *UpstreamTLS) validate(key string) []error {
	var errs []error
	if (t.CertFile == "") != (t.KeyFile == "") {
		errs = append(errs, fmt.Errorf("%s: cert_file and key_file go together: set both for a client certificate, or neither", key))
	}
	if t.InsecureSkipVerify && (t.CAFile != "" || t.ServerName != "") {
		errs = append(errs, fmt.Errorf("%s.insecure_skip_verify: true makes ca_file and server_name meaningless; unset one side", key))
	}
	return errs
}

func (u *UpstreamSASL) validate(key string, table *auth.Mechanisms) []error {
	m, _ := table.Upstream(u.Mechanism)
	switch m.Login {
	case auth.LoginOAuth:
		return u.validateOAuth(key)
	case auth.LoginProgram:
		return u.validateProgram(key)
	}
	var errs []error
	if m.Login != auth.LoginPassword {
		errs = append(errs, fmt.Errorf("%s.mechanism: %q: must be %s", key, u.Mechanism, auth.OrList(table.UpstreamNames())))
	}
	for _, k := range u.oauthKeysSet() {
		errs = append(errs, fmt.Errorf("%s.%s: only for mechanism OAUTHBEARER (mechanism is %q)", key, k, u.Mechanism))
	}
	if err := auth.ValidUserName(u.Username); err != nil {
		errs = append(errs, fmt.Errorf("%s.username: %w", key, err))
	}
	if n := countSet(u.Password, u.PasswordFile, u.PasswordEnv); n != 1 {
		// Never echo the password, even to say it is set.
		errs = append(errs, fmt.Errorf("%s: set exactly one of password, password_file, password_env (%d set)", key, n))
	}
	return errs
}

// validateProgram checks upstream.sasl with a program's mechanism, which
// brings its own credentials: no other key is used.
func (u *UpstreamSASL) validateProgram(key string) []error {
	var errs []error
	set := append(u.passwordKeysSet(), u.oauthKeysSet()...)
	for _, k := range set {
		errs = append(errs, fmt.Errorf("%s.%s: not used with mechanism %s (the program that added it logs kproxy in)", key, k, u.Mechanism))
	}
	return errs
}

// passwordKeysSet names the PLAIN and SCRAM keys that are set.
func (u *UpstreamSASL) passwordKeysSet() []string {
	var set []string
	for _, k := range []struct{ name, v string }{{"username", u.Username}, {"password", u.Password}, {"password_file", u.PasswordFile}, {"password_env", u.PasswordEnv}} {
		if k.v != "" {
			set = append(set, k.name)
		}
	}
	return set
}

// countSet counts the non-empty values: a secret must be given one way.
func countSet(values ...string) int {
	n := 0
	for _, v := range values {
		if v != "" {
			n++
		}
	}
	return n
}

func (l *ConnectionLimits) validate(key string) []error {
	var errs []error
	if l.HandshakeTimeout < 0 {
		errs = append(errs, fmt.Errorf("%s.handshake_timeout: %s: must be positive", key, l.HandshakeTimeout))
	}
	if l.MaxConnections < 0 {
		errs = append(errs, fmt.Errorf("%s.max_connections: %d: must be 0 (no cap) or more", key, l.MaxConnections))
	}
	if l.MaxConnectionsPerIP < 0 {
		errs = append(errs, fmt.Errorf("%s.max_connections_per_ip: %d: must be 0 (no cap) or more", key, l.MaxConnectionsPerIP))
	}
	if l.MaxHandshakes < 0 {
		errs = append(errs, fmt.Errorf("%s.max_handshakes: %d: must be 1 or more (0 or unset: %d)", key, l.MaxHandshakes, DefaultMaxHandshakes))
	}
	if l.MaxConnections > 0 && l.MaxConnectionsPerIP > l.MaxConnections {
		errs = append(errs, fmt.Errorf("%s.max_connections_per_ip: %d exceeds max_connections %d", key, l.MaxConnectionsPerIP, l.MaxConnections))
	}
	return errs
}
