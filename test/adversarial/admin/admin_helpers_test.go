package admin

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// startKproxy runs the kproxy binary with the admin endpoint and extra
// (top-level sections, as YAML).
func startKproxy(t *testing.T, extra string) *testkit.Binary {
	t.Helper()
	return advkit.Start(t, testkit.Config{Upstream: advkit.Kfake(t, 1), Admin: true, Log: "{level: info}", Extra: extra}.YAML())
}

// dialAdmin opens a TCP connection to the admin endpoint, closed when the
// test ends.
func dialAdmin(t *testing.T, kp *testkit.Binary) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", kp.Admin, 5*time.Second)
	if err != nil {
		t.Fatalf("dial the admin endpoint: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// stillServes checks the probes and the Kafka data path answer: what an
// attack on the admin endpoint must not stop.
func stillServes(t *testing.T, kp *testkit.Binary) {
	t.Helper()
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := testkit.HTTPGet(t, "http://"+kp.Admin+path); code != http.StatusOK {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	c := testkit.DialRaw(t, kp.Bootstrap, "admin-bystander")
	c.SetDeadline(time.Now().Add(20 * time.Second))
	c.MustRoundTrip(t, kmsg.NewPtrApiVersionsRequest())
}
