package engine

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
)

// The accept backoff after an error, net/http's schedule: 5 ms doubling to
// 1 s, from the start again after an accept succeeds.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// Why an accept failed (the reason label of kproxy_accept_errors_total).
const (
	acceptTooManyFiles       = "emfile"  // this process's descriptors are used up
	acceptTooManyFilesSystem = "enfile"  // the system's are
	acceptNoBuffers          = "enobufs" // socket buffers
	acceptNoMemory           = "enomem"
	acceptAborted            = "econnaborted" // the client reset it in the backlog
	acceptTimeout            = "timeout"
	acceptOther              = "other"
)

// acceptErrorReason names err, an error from accept, for the metric and
// the log line.
func acceptErrorReason(err error) string {
	switch {
	case errors.Is(err, syscall.EMFILE):
		return acceptTooManyFiles
	case errors.Is(err, syscall.ENFILE):
		return acceptTooManyFilesSystem
	case errors.Is(err, syscall.ENOBUFS):
		return acceptNoBuffers
	case errors.Is(err, syscall.ENOMEM):
		return acceptNoMemory
	case errors.Is(err, syscall.ECONNABORTED):
		return acceptAborted
	case isTimeout(err):
		return acceptTimeout
	}
	return acceptOther
}

// retryingListener is a listener whose Accept outlives accept errors: it
// reports each one (onError), waits out a backoff and tries again, as
// net/http's server and Kafka's acceptor do, so that running out of file
// descriptors, say, stalls new connections only until some are free
// instead of stopping the port for good. Accept returns an error only
// once the listener is closed.
type retryingListener struct {
	net.Listener
	// onError is told of every failed accept: why, and how long Accept
	// waits before the next.
	onError func(err error, reason string, retryIn time.Duration)

	closeOnce sync.Once
	closed    chan struct{} // interrupts a backoff
}

func newRetryingListener(ln net.Listener, onError func(err error, reason string, retryIn time.Duration)) *retryingListener {
	return &retryingListener{Listener: ln, onError: onError, closed: make(chan struct{})}
}

func (l *retryingListener) Accept() (net.Conn, error) {
	var backoff time.Duration
	for {
		conn, err := l.Listener.Accept()
		if err == nil {
			return conn, nil
		}
		if errors.Is(err, net.ErrClosed) {
			return nil, err
		}
		backoff = min(max(2*backoff, acceptBackoffMin), acceptBackoffMax)
		l.onError(err, acceptErrorReason(err), backoff)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-l.closed:
			t.Stop()
			return nil, net.ErrClosed
		}
	}
}

func (l *retryingListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// retryAccept wraps ln, the listener called name, so that its accept
// errors are retried, counted in kproxy_accept_errors_total and logged
// (sampled per listener as log.sample says).
func (s *Server) retryAccept(ln net.Listener, name string) *retryingListener {
	errs := s.metrics.acceptErrors
	return newRetryingListener(ln, func(err error, reason string, retryIn time.Duration) {
		errs.WithLabelValues(name, reason).Inc()
		ok, suppressed := s.closeLogs.allow("accept:"+name, time.Now())
		if !ok {
			return
		}
		s.log.Warn().Err(err).Str("listener", name).Str("reason", reason).Str("retry_in", durationText(retryIn)).
			Int("similar_suppressed", suppressed).Msg("accept failed; retrying")
	})
}

// RetryAccept wraps ln, a listener the program serves itself (the admin
// endpoint, as name), as kproxy's own listeners are: accept errors are
// retried with backoff, counted and logged, and only closing ln stops
// its Accept.
func (s *Server) RetryAccept(ln net.Listener, name string) net.Listener {
	return s.retryAccept(ln, name)
}
