package localkms_test

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestServesOnlyLoopback: the binary refuses an address outside
// 127.0.0.0/8 (local-kms's own main listens on every interface) and the
// helper's server answers the KMS API on its loopback endpoint.
func TestServesOnlyLoopback(t *testing.T) {
	k := localkms.Start(t) // skips or fails without the binary, as every KMS test
	if !strings.HasPrefix(k.Endpoint(), "http://127.0.0.1:") {
		t.Errorf("endpoint %s, want 127.0.0.1", k.Endpoint())
	}
	k.CreateKey()
	port := strconv.Itoa(testkit.FreePort(t))
	for _, host := range []string{"0.0.0.0", "", "::", "localhost", "10.0.0.1"} {
		addr := net.JoinHostPort(host, port)
		// A binary that listened instead would be killed after the timeout.
		out, err := exec.CommandContext(testkit.Context(t, 5*time.Second), os.Getenv(localkms.BinEnv), "-addr", addr).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "must be an address in 127.0.0.0/8") {
			t.Errorf("-addr %s: %v, %s; want a refusal", addr, err, out)
		}
	}
}
