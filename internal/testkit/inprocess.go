package testkit

import (
	"context"
	"io"
	"testing"
)

// ServeInProcess runs serve (kproxy in the test's process, as the kproxy
// command or a program embedding it runs it: until ctx ends, its JSON log
// written to log) and returns once the log names the bootstrap listener's
// and the admin endpoint's addresses. Stop ends ctx and returns serve's
// error; if the test ends first, ctx is ended then and the test waits for
// serve to return.
func ServeInProcess(t testing.TB, serve func(ctx context.Context, log io.Writer) error) *Binary {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serve(ctx, w)
		w.Close()
		done <- err
	}()
	var exit error
	stopped := false
	wait := func() error {
		if !stopped {
			exit, stopped = <-done, true
		}
		return exit
	}
	t.Cleanup(func() {
		cancel()
		go io.Copy(io.Discard, r) // log lines nobody reads must not block the drain
		wait()
	})
	return readLog(t, r, &Binary{terminate: cancel, wait: wait})
}

// LocalConfig is a configuration file's text for a kproxy that
// RunBinary or ServeInProcess starts in front of upstream: listeners and
// the admin endpoint on 127.0.0.1 with OS-chosen ports, and the JSON log
// at info that they read.
func LocalConfig(upstream string) string {
	return Config{Upstream: []string{upstream}, Admin: true, Log: "{level: info, format: json}"}.YAML()
}

// WriteConfig writes a configuration file with text into a temporary
// directory and returns its path.
func WriteConfig(t testing.TB, text string) string {
	t.Helper()
	return WriteFile(t, "kproxy.yaml", text)
}
