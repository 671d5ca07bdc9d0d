package proxy_test

import (
	"context"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/proxy"
)

// reloadableServer is kproxy run in the test's process by proxy.Run from
// a configuration file the test rewrites and reloads, as an operator does.
type reloadableServer struct {
	*testkit.Binary
	t      *testing.T
	path   string
	reload chan os.Signal
}

// serveReloadable writes config to a file and serves it with opts (their
// ConfigPath, LogOutput and Reload set here) until the test ends; it
// returns once kproxy is ready.
func serveReloadable(t *testing.T, config string, opts proxy.Options) *reloadableServer {
	t.Helper()
	s := &reloadableServer{t: t, path: testkit.WriteConfig(t, config), reload: make(chan os.Signal, 1)}
	opts.ConfigPath, opts.Reload = s.path, s.reload
	s.Binary = testkit.ServeInProcess(t, func(ctx context.Context, log io.Writer) error {
		opts.LogOutput = log
		return proxy.Run(ctx, opts)
	})
	s.WaitReady()
	return s
}

// signalReload sends kproxy SIGHUP: it re-reads its file.
func (s *reloadableServer) signalReload() { s.reload <- syscall.SIGHUP }

// reloadWith rewrites the file with config and signals the reload.
func (s *reloadableServer) reloadWith(config string) {
	s.t.Helper()
	if err := os.WriteFile(s.path, []byte(config), 0o600); err != nil {
		s.t.Fatal(err)
	}
	s.signalReload()
}
