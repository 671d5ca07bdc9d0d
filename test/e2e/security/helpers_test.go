package e2esecurity

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
)

// waitFor polls cond until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool { return testkit.WaitFor(d, cond) }

// ---- raw protocol connections ----

// rawConn is a hand-driven Kafka connection (plaintext or TLS), for tests
// that must see exactly what happens to one connection.
type rawConn = testkit.RawConn

const rawClientID = "e2esecurity-raw"

func dialRaw(t *testing.T, addr string) *rawConn { return testkit.DialRaw(t, addr, rawClientID) }

// dialRawTLS dials addr and completes a TLS handshake with cfg.
func dialRawTLS(t *testing.T, addr string, cfg *tls.Config) (*rawConn, error) {
	return testkit.DialRawTLS(t, addr, rawClientID, cfg)
}

// ---- metrics ----

func closedTotal(t testing.TB, g prometheus.Gatherer, reason string) float64 {
	t.Helper()
	return testkit.MetricValue(t, g, "kproxy_connections_closed_total", "reason", reason)
}

// ---- franz-go ----

func newClient(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl := testkit.Client(t, append([]kgo.Opt{
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
	}, opts...)...)
	return cl
}

// caPool is the test CA as a pool, for clients that build their own
// tls.Config.
func caPool(p certs.Files) *x509.CertPool {
	pem, err := os.ReadFile(p.CAFile)
	if err != nil {
		panic(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return pool
}

// consumeInOrder polls consumer until *got reaches upTo, failing unless
// the records are r0000, r0001, ... in order from *got on: nothing lost
// or repeated.
func consumeInOrder(t *testing.T, ctx context.Context, consumer *kgo.Client, got *int, upTo int) {
	t.Helper()
	for *got < upTo {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume after %d records: %v", *got, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if want := fmt.Sprintf("r%04d", *got); string(r.Value) != want {
				t.Fatalf("record %d is %q, want %q: lost or repeated", *got, r.Value, want)
			}
			*got++
		})
	}
}

// serverTLS is the listeners' tls key serving p's server certificate;
// requireCN also requires a client certificate from p's CA and takes the
// principal from its CN.
func serverTLS(p certs.Files, requireCN bool) string {
	if requireCN {
		return fmt.Sprintf("tls: {cert_file: %q, key_file: %q, client_auth: require, client_ca_file: %q, principal_from: cn}",
			p.ServerCert, p.ServerKey, p.CAFile)
	}
	return fmt.Sprintf("tls: {cert_file: %q, key_file: %q}", p.ServerCert, p.ServerKey)
}
