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
// host a moment ago: a broker port map (base, base+1, ...) to write into a
// configuration. Like FreePort, another process may take one meanwhile.
func FreePortRun(t testing.TB, host string, n int) int {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatal(err)
		}
		base := ln.Addr().(*net.TCPAddr).Port
		held := []net.Listener{ln}
		for i := 1; i < n && base+i <= 65535; i++ {
			l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(base+i)))
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
	t.Fatalf("no %d consecutive free ports on %s", n, host)
	return 0
}
