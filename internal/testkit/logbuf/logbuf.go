// Package logbuf is a log sink for tests: a buffer that any goroutine may
// write to while the test reads it. It imports nothing of kproxy's, so the
// engine's own internal tests can use it.
package logbuf

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// Buffer collects bytes written from any goroutine. The zero value is ready.
type Buffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	delay time.Duration
}

// Write appends p, after the delay SetWriteDelay set.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	time.Sleep(s.delay)
	return s.b.Write(p)
}

// SetWriteDelay makes every later Write take d: a slow disk, for tests of
// what backs up behind a slow log or audit sink.
func (s *Buffer) SetWriteDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Bytes returns a copy of what was written so far.
func (s *Buffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// String returns what was written so far.
func (s *Buffer) String() string { return string(s.Bytes()) }

// Lines decodes what was written so far as JSON lines (zerolog's format),
// failing the test on a line that is not a JSON object.
func (s *Buffer) Lines(t testing.TB) []map[string]any {
	t.Helper()
	return JSONLines[map[string]any](t, s)
}

// JSONLines decodes what was written to s so far as one T per non-empty
// line, failing the test on a line that does not decode as a T (with
// map[string]string, for example, on a line whose values are not all
// strings).
func JSONLines[T any](t testing.TB, s *Buffer) []T {
	t.Helper()
	var out []T
	for _, l := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if l == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("log line %q is not a %T: %v", l, v, err)
		}
		out = append(out, v)
	}
	return out
}
