package testkit

import (
	"net"
	"testing"
)

// FreePort is a TCP port that was free on 127.0.0.1 a moment ago, for a
// listener whose address must be written into a configuration before it
// starts, or for an address nothing listens on. Another process may take
// it meanwhile; tests that cannot afford that read the bound address
// instead.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
