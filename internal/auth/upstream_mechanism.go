package auth

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// UpstreamMechanism returns the franz-go client mechanism that logs kproxy
// in to its upstream as user with password (see ResolveSecret for reading
// the password from a file or the environment).
func UpstreamMechanism(mechanism, user, password string) (sasl.Mechanism, error) {
	if user == "" || password == "" {
		return nil, errors.New("upstream SASL: user and password must be non-empty")
	}
	switch mechanism {
	case Plain:
		return plain.Auth{User: user, Pass: password}.AsMechanism(), nil
	case ScramSHA256:
		return scram.Auth{User: user, Pass: password}.AsSha256Mechanism(), nil
	case ScramSHA512:
		return scram.Auth{User: user, Pass: password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("upstream SASL: %w %q (want %s, %s or %s)", ErrUnsupportedMechanism, mechanism, Plain, ScramSHA256, ScramSHA512)
}
