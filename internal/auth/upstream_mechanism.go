package auth

import (
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/sasl"
)

// UpstreamMechanism returns the franz-go client mechanism that logs kproxy
// in to its upstream as user with password (see ResolveSecret for reading
// the password from a file or the environment).
func UpstreamMechanism(mechanism, user, password string) (sasl.Mechanism, error) {
	if user == "" || password == "" {
		return nil, errors.New("upstream SASL: user and password must be non-empty")
	}
	var t *Mechanisms
	m, ok := t.Upstream(mechanism)
	if !ok || m.Login != LoginPassword {
		return nil, fmt.Errorf("upstream SASL: %w %q (want %s)", ErrUnsupportedMechanism, mechanism, OrList(t.passwordLogins()))
	}
	return m.password(user, password), nil
}

// passwordLogins are the mechanisms kproxy logs in upstream with by
// password.
func (t *Mechanisms) passwordLogins() []string {
	names := t.UpstreamNames()
	return slices.DeleteFunc(names, func(n string) bool { m, _ := t.Upstream(n); return m.Login != LoginPassword })
}
