package admin

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// A peer opens 50 connections to the admin endpoint, asks /healthz once on
// each with keep-alive, and then holds them idle. Without an idle bound
// net/http holds such a connection, and its descriptor, forever; kproxy
// closes each within the header timeout (5s) of its last answer, as it
// closes one that never sends a header. 30s is the generous bound for a
// loaded machine.
func TestIdleKeepAliveConnectionsClosed(t *testing.T) {
	kp := startKproxy(t, "")
	const conns = 50
	held := make([]net.Conn, conns)
	for i := range held {
		c := dialAdmin(t, kp)
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: admin\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("connection %d: %v %v, want a keep-alive 200", i, err, resp)
		}
		held[i] = c
	}
	stillServes(t, kp)
	for i, c := range held {
		if !advkit.ClosedWithin(c, 30*time.Second) {
			t.Fatalf("idle keep-alive connection %d still open 30s after its answer", i)
		}
	}
	stillServes(t, kp)
}

// A peer sends GET /healthz announcing a 100000-byte body and trickles
// nothing more. No admin path reads a body, but net/http waits for it
// before answering, without a deadline of its own: kproxy bounds that wait
// by the header timeout and closes the connection.
func TestTricklingBodyClosed(t *testing.T) {
	kp := startKproxy(t, "")
	c := dialAdmin(t, kp)
	fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: admin\r\nContent-Length: 100000\r\n\r\nabc")
	if !advkit.ClosedWithin(c, 30*time.Second) {
		t.Fatal("a connection trickling its request body still open after 30s")
	}
	stillServes(t, kp)
}

// A peer pipelines /metrics requests and never reads an answer. kproxy's
// writes block once the socket buffers are full; without a write deadline
// the connection is held forever. kproxy gives up after the write timeout
// (10s) and closes it, which the peer sees as its writes failing with a
// reset rather than blocking. 40s is the generous bound.
func TestNonReadingPeerClosed(t *testing.T) {
	kp := startKproxy(t, "")
	c := dialAdmin(t, kp)
	c.(*net.TCPConn).SetReadBuffer(4 << 10) // fill up sooner
	req := []byte(strings.Repeat("GET /metrics HTTP/1.1\r\nHost: admin\r\n\r\n", 64))
	deadline := time.Now().Add(40 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatal("a peer that never reads still connected after 40s")
		}
		c.SetWriteDeadline(time.Now().Add(time.Second)) // blocked: kproxy has stopped reading too
		_, err := c.Write(req)
		if err != nil && !advkit.IsTimeout(err) {
			break // closed by kproxy
		}
	}
	stillServes(t, kp)
}
