package auth

import "fmt"

// UserFromClientMessage reads the user a client names in its first SASL
// message, without verifying anything: in passthrough mode the upstream
// verifies, and kproxy only wants the name for logs and policy until then.
// For PLAIN it is the authentication id; for SCRAM the unescaped n=
// attribute. Errors never repeat the message, which for PLAIN holds the
// password.
//
// The name is a claim until the upstream accepts the exchange: use it for
// decisions only after the upstream's SaslAuthenticate succeeds.
func UserFromClientMessage(mechanism string, firstClientMsg []byte) (string, error) {
	switch {
	case mechanism == Plain:
		m, err := parsePlain(firstClientMsg)
		if err != nil {
			return "", fmt.Errorf("user from PLAIN message: %w", err)
		}
		return m.User, nil
	case isScram(mechanism):
		cf, err := parseScramClientFirst(firstClientMsg)
		if err != nil {
			return "", fmt.Errorf("user from %s client-first message: %w", mechanism, err)
		}
		return cf.User, nil
	}
	return "", fmt.Errorf("user from client message: %w %q", ErrUnsupportedMechanism, mechanism)
}
