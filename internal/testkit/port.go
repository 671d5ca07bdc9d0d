package testkit

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
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
// configuration.
//
// The ports are drawn at random from below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range). A port the kernel handed out itself
// (port 0) is free again the moment the probe closes it, and the kernel
// hands it to the next listener on port 0 or outgoing connection of any
// test running in parallel: CI saw kproxy's SNI listener fail with
// "address already in use" that way. Below the range only another test
// drawing at random can take it.
func FreePortRun(t testing.TB, host string, n int) int {
	t.Helper()
	low := ephemeralLow()
	for range 200 {
		base := belowEphemeral + rand.IntN(low-belowEphemeral-n)
		if portsFree(host, base, n) {
			return base
		}
	}
	t.Fatalf("no %d consecutive free ports on %s between %d and %d", n, host, belowEphemeral, low)
	return 0
}

// belowEphemeral is the lowest port FreePortRun draws: clear of the
// well-known and commonly configured ports.
const belowEphemeral = 10000

// ephemeralLow is the first port of the kernel's ephemeral range, or
// Linux's default (32768) where it cannot be read.
func ephemeralLow() int {
	const linuxDefault = 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return linuxDefault
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return linuxDefault
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low < belowEphemeral+1000 {
		return linuxDefault
	}
	return low
}

// portsFree reports whether ports base..base+n-1 can all be bound on host.
func portsFree(host string, base, n int) bool {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for i := range n {
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(base+i)))
		if err != nil {
			return false
		}
		held = append(held, l)
	}
	return true
}
