package engine

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// failingListener fails its first failures accepts with err, then accepts
// from the real listener it wraps.
type failingListener struct {
	net.Listener
	mu       sync.Mutex
	failures int
	err      error
}

func (l *failingListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.failures > 0 {
		l.failures--
		l.mu.Unlock()
		return nil, l.err
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

// emfile is accept's error when the process has no file descriptor left.
func emfile() error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
}

// An accept that fails for want of file descriptors must not stop the
// listener: it backs off and accepts again once it can, as Kafka's
// acceptor and net/http's server do. The errors are counted by listener
// and reason.
func TestAcceptOutlivesTemporaryErrors(t *testing.T) {
	s, reg := admissionServer(t, "", "  handshake_timeout: 5m")
	real, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &failingListener{Listener: real, failures: 4, err: emfile()}
	defer ln.Close()
	s.serveListener(ln, 7, "node-7", s.listeners[0])

	c, err := net.Dial("tcp", real.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	errs := func() float64 {
		return admissionMetric(t, reg, "kproxy_accept_errors_total", "listener", "node-7", "reason", "emfile")
	}
	active := func() float64 { return admissionMetric(t, reg, "kproxy_connections_active", "listener", "node-7") }
	waitAdmission(t, func() bool { return active() == 1 }, func() string {
		return fmt.Sprintf("after %v accept errors (emfile) the listener accepted %v connections; want the waiting one accepted", errs(), active())
	})
	if got := errs(); got != 4 {
		t.Errorf(`kproxy_accept_errors_total{listener="node-7",reason="emfile"} = %v, want 4`, got)
	}
}

// The backoff between failed accepts follows net/http's schedule, 5 ms
// doubling to 1 s, and starts again after an accept succeeds; closing the
// listener ends a backoff at once.
func TestAcceptBackoffSchedule(t *testing.T) {
	real, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &failingListener{Listener: real, failures: 9, err: emfile()}
	var delays []time.Duration
	var reasons []string
	rl := newRetryingListener(ln, func(_ error, reason string, d time.Duration) {
		delays = append(delays, d)
		reasons = append(reasons, reason)
	})
	defer rl.Close()
	client, err := net.Dial("tcp", real.Addr().String()) // waits in the backlog
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	conn, err := rl.Accept()
	if err != nil {
		t.Fatalf("Accept after 9 EMFILE errors: %v", err)
	}
	conn.Close()
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000}
	if len(delays) != len(want) {
		t.Fatalf("backoffs %v, want %d", delays, len(want))
	}
	for i, d := range delays {
		if d != want[i]*time.Millisecond || reasons[i] != "emfile" {
			t.Errorf("backoff %d: %v (%s), want %v (emfile)", i, d, reasons[i], want[i]*time.Millisecond)
		}
	}

	// After a success the schedule starts again; Close ends the wait.
	ln.mu.Lock()
	ln.failures = 1 << 30
	ln.mu.Unlock()
	delays = nil
	done := make(chan error, 1)
	go func() { _, err := rl.Accept(); done <- err }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		select {
		case err := <-done:
			if err == nil || len(delays) == 0 || delays[0] != acceptBackoffMin {
				t.Fatalf("Accept after Close: %v (backoffs %v); want net.ErrClosed after a schedule starting at %v", err, delays, acceptBackoffMin)
			}
			return
		case <-ctx.Done():
			t.Fatal("Accept did not return within 20s of Close")
		case <-time.After(50 * time.Millisecond):
			rl.Close()
		}
	}
}

func TestAcceptErrorReason(t *testing.T) {
	for err, want := range map[error]string{
		emfile(): "emfile",
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ENFILE)}:       "enfile",
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ENOBUFS)}:      "enobufs",
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ENOMEM)}:       "enomem",
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ECONNABORTED)}: "econnaborted",
		os.ErrDeadlineExceeded: "timeout",
		&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EINVAL)}: "other",
	} {
		if got := acceptErrorReason(err); got != want {
			t.Errorf("acceptErrorReason(%v) = %s, want %s", err, got, want)
		}
	}
}
