package conformance

import (
	"crypto/tls"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kproxy/kproxy/internal/tlsconfig"
)

// clientTLS trusts the CA of kproxy's secure listener.
func clientTLS(t *testing.T, e *env) *tls.Config {
	t.Helper()
	tc, err := tlsconfig.ClientConfig(e.pki.CAFile, "", "", "", false)
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

func scramAuth(password string) scram.Auth { return scram.Auth{User: saslUser, Pass: password} }

// scramMechanism is franz-go's SCRAM client for the test user.
func scramMechanism(sha512 bool) sasl.Mechanism {
	if sha512 {
		return scramAuth(saslPass).AsSha512Mechanism()
	}
	return scramAuth(saslPass).AsSha256Mechanism()
}
