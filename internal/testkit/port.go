package testkit

import (
	"testing"

	"github.com/kproxy/kproxy/internal/freeport"
)

// FreePort is a TCP port that was free on 127.0.0.1 a moment ago, for a
// listener whose address must be written into a configuration before it
// starts, or for an address nothing listens on. See FreePortRun for why
// another process is unlikely to take it meanwhile.
func FreePort(t testing.TB) int {
	t.Helper()
	return FreePortRun(t, "127.0.0.1", 1)
}

// FreePortRun is the first of n consecutive TCP ports that were free on
// host a moment ago: a broker port map (base, base+1, ...) to write into a
// configuration. They lie below the kernel's ephemeral range: see
// freeport.Run.
func FreePortRun(t testing.TB, host string, n int) int {
	t.Helper()
	base, err := freeport.Run(host, n)
	if err != nil {
		t.Fatal(err)
	}
	return base
}
