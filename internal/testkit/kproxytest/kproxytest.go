// Package kproxytest starts kproxy for a test the way the kproxy command
// does: through proxy.Run, from a configuration file, in the test's
// process. Everything the file configures (the policy, audit, quotas,
// virtual clusters, tracing, the admin endpoint) is wired by the same code
// as in production. It is apart from testkit because the packages that
// server wires (the policy, tracing) use testkit in their own tests.
package kproxytest

import (
	"context"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
	"github.com/kproxy/kproxy/proxy"
)

// Kproxy is a kproxy a test started, stopped when the test ends.
type Kproxy struct {
	// Started gives the bound addresses (BootstrapAddr, BrokerAddr,
	// SNIAddr, AdminAddr) and readiness (Ready, WaitReady).
	proxy.Started
	// Registry gathers what the admin endpoint serves at /metrics.
	Registry prometheus.Gatherer
	// Logs holds every line kproxy logged, as JSON, at the level WithLog
	// set (warnings without it).
	Logs *logbuf.Buffer

	t      testing.TB
	path   string
	reload chan os.Signal
	stop   func() error
	// mark is how many lines Logs held at the last Reload: WaitLog looks
	// at the lines after it.
	mark int
}

// Option changes how Start starts kproxy.
type Option func(*settings)

type settings struct {
	unready bool
	filters []filter.Filter
	log     io.Writer // nil: warnings to the test's log
	level   zerolog.Level
}

// WithFilters passes a program's own filters to proxy.Run, as a program
// embedding kproxy would.
func WithFilters(f ...filter.Filter) Option {
	return func(s *settings) { s.filters = append(s.filters, f...) }
}

// WithLog writes kproxy's log to w at level, for tests that assert what
// kproxy logs (testkit's logbuf.Buffer reads it back).
func WithLog(w io.Writer, level zerolog.Level) Option {
	return func(s *settings) { s.log, s.level = w, level }
}

// Unready makes Start return once kproxy listens, without waiting for it
// to be ready: for a kproxy whose upstream is unreachable, misbehaves, or
// refuses its login.
func Unready() Option { return func(s *settings) { s.unready = true } }

// Start writes yaml to a configuration file and runs kproxy from it with
// proxy.Run until the test ends. It returns once every listener is bound
// and (unless Unready) kproxy is ready, failing the test if Run fails
// first.
func Start(t testing.TB, yaml string, opts ...Option) *Kproxy {
	t.Helper()
	k, err := TryStart(t, yaml, opts...)
	if err != nil {
		t.Fatalf("start kproxy: %v", err)
	}
	return k
}

// TryStart is Start for a test of how kproxy fails to start: it returns
// proxy.Run's error (an invalid configuration, a file it cannot read, a
// port it cannot bind) instead of failing the test.
func TryStart(t testing.TB, yaml string, opts ...Option) (*Kproxy, error) {
	t.Helper()
	var set settings
	for _, o := range opts {
		o(&set)
	}
	out, level := set.log, set.level
	if out == nil {
		// Registered first, so the writer outlives Run.
		out, level = testkit.TestWriter(t), zerolog.WarnLevel
	}
	k := &Kproxy{t: t, path: testkit.WriteConfig(t, yaml), reload: make(chan os.Signal, 1), Logs: &logbuf.Buffer{}}
	log := zerolog.New(io.MultiWriter(out, k.Logs)).Level(level).With().Timestamp().Logger()

	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan proxy.Started, 1)
	var exit error // Run's, once finished is closed
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		exit = proxy.Run(ctx, proxy.Options{
			ConfigPath: k.path,
			Filters:    set.filters,
			Logger:     &log,
			Reload:     k.reload,
			Started:    func(s proxy.Started) { started <- s },
		})
	}()
	k.stop = func() error {
		cancel()
		<-finished
		return exit
	}
	t.Cleanup(func() { k.stop() })
	select {
	case k.Started = <-started:
	case <-finished:
		return nil, exit
	}
	k.Registry = k.Metrics()
	if !set.unready {
		wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
		defer wcancel()
		if err := k.WaitReady(wctx); err != nil {
			t.Fatalf("kproxy not ready: %v", err)
		}
	}
	return k, nil
}

// Reload rewrites the configuration file with yaml and has kproxy reload
// it, as SIGHUP does. The reload is applied when kproxy logs its outcome
// (WaitLog), at info level; without that level, poll for its effect.
func (k *Kproxy) Reload(yaml string) {
	k.t.Helper()
	k.mark = len(k.Logs.Lines(k.t))
	if err := os.WriteFile(k.path, []byte(yaml), 0o600); err != nil {
		k.t.Fatal(err)
	}
	k.reload <- syscall.SIGHUP
}

// WaitLog returns the first line logged since the last Reload (or since
// the start) that match accepts, failing the test after 20 seconds.
func (k *Kproxy) WaitLog(what string, match func(testkit.LogLine) bool) testkit.LogLine {
	k.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		lines := k.Logs.Lines(k.t)
		for _, l := range lines[min(k.mark, len(lines)):] {
			if match(l) {
				return l
			}
		}
	}
	k.t.Fatalf("kproxy did not log %s within 20s", what)
	return nil
}

// Stop cancels Run's context and returns Run's error once kproxy has
// drained; later calls return the same error.
func (k *Kproxy) Stop() error { return k.stop() }
