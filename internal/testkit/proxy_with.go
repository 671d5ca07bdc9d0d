package testkit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/proxy"
)

// StartProxyWith is StartProxy with proxy options, for tests of features
// that plug into the engine as filters. It waits until kproxy is ready and
// shuts it down when the test ends.
func StartProxyWith(t testing.TB, bootstrap []string, extraYAML string, opts ...proxy.Option) *Proxy {
	t.Helper()
	return StartProxyConfig(t, fmt.Sprintf(`
upstream:
  bootstrap_servers: ["%s"]
  dial_timeout: 5s
listeners:
  bind_host: 127.0.0.1
  bootstrap_port: 0
  broker_port_base: 0
log: {level: warn}
%s`, strings.Join(bootstrap, `", "`), extraYAML), opts...)
}
