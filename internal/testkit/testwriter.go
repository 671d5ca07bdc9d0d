package testkit

import (
	"io"
	"sync"
	"testing"

	"github.com/rs/zerolog"
)

// TestWriter is a writer to t's log that drops writes once t has ended:
// a server a test started may still log while it shuts down, and a test
// writer must not be used after its test ends. Call it before registering
// the server's shutdown, so that its cleanup runs after the shutdown.
func TestWriter(t testing.TB) io.Writer {
	w := &guardedWriter{w: zerolog.NewTestWriter(t)}
	t.Cleanup(w.stop)
	return w
}

// guardedWriter drops writes once stopped.
type guardedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	stopped bool
}

func (g *guardedWriter) Write(b []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return len(b), nil
	}
	return g.w.Write(b)
}

func (g *guardedWriter) stop() {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
}
