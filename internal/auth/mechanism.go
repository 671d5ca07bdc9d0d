package auth

import (
	"crypto/sha256"
	"crypto/sha512"
	"hash"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SASL mechanism names, spelled as Kafka spells them (case matters).
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
)

// builtinServer is the server side of the built-in mechanisms: adding one
// to kproxy is adding its entry here (and to builtinUpstream if kproxy
// can log in with it).
func builtinServer() []ServerMechanism {
	password := func(name string, verifies func(credential string) bool, start func(CredentialStore) Session, user func([]byte) (string, error), steps int) ServerMechanism {
		return ServerMechanism{
			Name: name, Needs: NeedsUsers, verifies: verifies, Steps: steps, passthroughUser: user,
			start: func(o Options) Session { return start(o.Store) },
		}
	}
	scram := func(name string) ServerMechanism {
		return password(name, func(c string) bool { return c == name },
			func(store CredentialStore) Session { return newScramServer(name, store) }, brokerScramUserOf(name), 2)
	}
	return []ServerMechanism{
		// PLAIN logins are checked against any stored SCRAM credential.
		password(Plain, func(string) bool { return true },
			func(store CredentialStore) Session { return &plainServer{store: store} }, brokerPlainUserOf, 1),
		scram(ScramSHA256),
		scram(ScramSHA512),
		{
			Name: OAuthBearer, Needs: NeedsOAuthBearer, Steps: 1,
			TerminateOnly: "in passthrough kproxy cannot tell the broker's principal from a token",
			start:         func(o Options) Session { return &oauthServer{validator: o.OAuthBearer} },
		},
	}
}

// builtinUpstream is the upstream side of the built-in mechanisms.
func builtinUpstream() []ClientMechanism {
	return []ClientMechanism{
		{Name: Plain, Login: LoginPassword, password: func(u, p string) sasl.Mechanism { return plain.Auth{User: u, Pass: p}.AsMechanism() }},
		{Name: ScramSHA256, Login: LoginPassword, password: func(u, p string) sasl.Mechanism { return scram.Auth{User: u, Pass: p}.AsSha256Mechanism() }},
		{Name: ScramSHA512, Login: LoginPassword, password: func(u, p string) sasl.Mechanism { return scram.Auth{User: u, Pass: p}.AsSha512Mechanism() }},
		{Name: OAuthBearer, Login: LoginOAuth},
	}
}

// IsScram reports whether name is one of the SCRAM mechanisms, the ones
// `kproxy hash-password` stores credentials for.
func IsScram(name string) bool { return scramHash(name) != nil }

// scramHash is the hash function of a SCRAM mechanism, or nil.
func scramHash(mechanism string) func() hash.Hash {
	switch mechanism {
	case ScramSHA256:
		return sha256.New
	case ScramSHA512:
		return sha512.New
	}
	return nil
}
