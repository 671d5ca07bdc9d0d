package testkit

import (
	"net"
	"strconv"
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

// FreePortRun is the first of n consecutive TCP ports that were free on
// 127.0.0.1 a moment ago: a broker port map (base, base+1, ...) written
// into a configuration before kproxy starts.
func FreePortRun(t testing.TB, n int) int {
	t.Helper()
	for range 50 {
		base := FreePort(t)
		if base+n > 65535 {
			continue
		}
		var held []net.Listener
		for i := range n {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base+i)))
			if err != nil {
				break
			}
			held = append(held, l)
		}
		for _, l := range held {
			l.Close()
		}
		if len(held) == n {
			return base
		}
	}
	t.Fatalf("no %d consecutive free ports on 127.0.0.1", n)
	return 0
}
