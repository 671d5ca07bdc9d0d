package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// localExhaustion reports whether err says this process or host ran out
// of what a socket needs (descriptors, socket buffers, memory): nothing
// about the upstream it was for.
func localExhaustion(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM)
}

// dialWaitingForDescriptors dials addr over TCP. Where the socket cannot be
// made for want of descriptors (or buffers, or memory), it waits out a
// backoff (the listeners' accept schedule, 5 ms doubling to 1 s) and tries
// again until ctx ends, as the listeners do: a client accepted the moment
// one descriptor came free is then served once the next one does,
// instead of being closed unanswered.
func dialWaitingForDescriptors(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{KeepAlive: 30 * time.Second}
	var backoff time.Duration
	for {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil || !localExhaustion(err) {
			return conn, err
		}
		backoff = min(max(2*backoff, acceptBackoffMin), acceptBackoffMax)
		wait := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			wait.Stop()
			return nil, fmt.Errorf("no descriptor came free before the dial's deadline: %w", err)
		case <-wait.C:
		}
	}
}
