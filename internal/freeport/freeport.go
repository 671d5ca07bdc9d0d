// Package freeport draws TCP ports to write into a configuration before
// the listener that binds them starts: from below the kernel's ephemeral
// range, so that no listener on port 0 or outgoing connection can be
// handed them meanwhile. Tests reach it through testkit.FreePortRun; tools
// such as kproxy-bench, which are not tests, use it directly.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Run is the first of n consecutive TCP ports that were free on host a
// moment ago, drawn at random from below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range). A port the kernel handed out itself
// (port 0) is free again the moment the probe closes it, and the kernel
// hands it to the next listener on port 0 or outgoing connection of any
// process: kproxy's listeners failed with "address already in use" that
// way. Below the range only another process drawing at random can take it.
func Run(host string, n int) (int, error) {
	low := EphemeralLow()
	for range 200 {
		base := BelowEphemeral + rand.IntN(low-BelowEphemeral-n)
		if Free(host, base, n) {
			return base, nil
		}
	}
	return 0, fmt.Errorf("no %d consecutive free ports on %s between %d and %d", n, host, BelowEphemeral, low)
}

// BelowEphemeral is the lowest port Run draws: clear of the
// well-known and commonly configured ports.
const BelowEphemeral = 10000

// EphemeralLow is the first port of the kernel's ephemeral range, or
// Linux's default (32768) where it cannot be read.
func EphemeralLow() int {
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
	if err != nil || low < BelowEphemeral+1000 {
		return linuxDefault
	}
	return low
}

// Free reports whether ports base..base+n-1 can all be bound on host.
func Free(host string, base, n int) bool {
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
