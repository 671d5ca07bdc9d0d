package config

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/policy/policyconfig"
)

const reloadUpstream = "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\n"

// recordingApplier records what a Reloader hands it.
type recordingApplier struct {
	applied  chan *Config
	rejected chan error
	err      error // ApplyConfig's answer
}

func newRecordingApplier() *recordingApplier {
	return &recordingApplier{applied: make(chan *Config, 16), rejected: make(chan error, 16)}
}

func (a *recordingApplier) ApplyConfig(cfg *Config, log zerolog.Logger) error {
	a.applied <- cfg
	log.Info().Msg("applied")
	return a.err
}

func (a *recordingApplier) ConfigRejected(err error) { a.rejected <- err }

// reloadFixture is a configuration file, its contents at start, and a
// Reloader watching it that logs to logs.
type reloadFixture struct {
	path  string
	apply *recordingApplier
	r     *Reloader
	logs  bytes.Buffer
}

func newReloadFixture(t *testing.T, body string) *reloadFixture {
	t.Helper()
	file, err := os.CreateTemp(t.TempDir(), "kproxy-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file.Close()
	f := &reloadFixture{path: file.Name(), apply: newRecordingApplier()}
	f.write(t, body)
	running, err := Load(f.path)
	if err != nil {
		t.Fatal(err)
	}
	f.r = NewReloader(f.path, running, f.apply, zerolog.New(&f.logs))
	return f
}

func (f *reloadFixture) write(t *testing.T, body string) {
	t.Helper()
	if err := os.WriteFile(f.path, []byte(reloadUpstream+body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestReloaderHandsValidFileToApplier(t *testing.T) {
	f := newReloadFixture(t, "policy: {default: deny}\n")
	f.write(t, "policy: {default: allow}\nlisteners: {bootstrap_port: 9999}\n")
	if err := f.r.Reload("test"); err != nil {
		t.Fatal(err)
	}
	select {
	case cfg := <-f.apply.applied:
		if cfg.Policy.Default != policyconfig.PolicyDefaultAllow || cfg.Listeners.BootstrapPort != 9999 {
			t.Errorf("applied %+v, %+v: not the file's new contents", cfg.Policy, cfg.Listeners)
		}
	default:
		t.Fatal("a valid file was not applied")
	}
	for _, want := range []string{`"section":"listeners"`, `"trigger":"test"`, `"config":"` + f.path + `"`, "takes effect only after a restart"} {
		if !strings.Contains(f.logs.String(), want) {
			t.Errorf("the restart warning lacks %s: %s", want, f.logs.String())
		}
	}

	f.apply.err = errors.New("cannot apply")
	if err := f.r.Reload("test"); err != f.apply.err {
		t.Errorf("Reload returned %v, want the Applier's error", err)
	}
}

func TestReloaderRejectsInvalidFile(t *testing.T) {
	f := newReloadFixture(t, "policy: {default: deny}\n")
	f.write(t, "policy: {default: allow, rules: [{name: r, principals: [\"*\"], allow: [wrte], topics: [\"*\"]}]}\n")
	err := f.r.Reload("test")
	const want = `policy.rules[0].allow[0]: "wrte" is not an operation; valid: read, write, create, delete, alter, describe, describe_configs, alter_configs, idempotent_write, cluster_action, all`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("broken file: %v, want %s", err, want)
	}
	if got := <-f.apply.rejected; got != err {
		t.Errorf("the Applier was told %v, want %v", got, err)
	}
	if logs := f.logs.String(); !strings.Contains(logs, "configuration reload rejected") || !strings.Contains(logs, "wrte") {
		t.Errorf("the rejection log does not name the problem: %s", logs)
	}

	if err := os.Remove(f.path); err != nil {
		t.Fatal(err)
	}
	if err := f.r.Reload("test"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if len(f.apply.rejected) != 1 || len(f.apply.applied) != 0 {
		t.Errorf("missing file: %d rejections (want 1), %d applied (want 0)", len(f.apply.rejected), len(f.apply.applied))
	}
}

func TestReloaderWatchReloadsChangedFile(t *testing.T) {
	f := newReloadFixture(t, "policy: {default: deny}\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { f.r.Watch(ctx, 10*time.Millisecond); close(done) }()
	select {
	case <-f.apply.applied:
		t.Fatal("Watch reloaded an unchanged file")
	case <-time.After(100 * time.Millisecond):
	}
	f.write(t, "policy: {default: allow}\n# changed size\n")
	select {
	case cfg := <-f.apply.applied:
		if cfg.Policy.Default != policyconfig.PolicyDefaultAllow {
			t.Errorf("Watch applied %+v", cfg.Policy)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not apply the changed file")
	}
	cancel()
	<-done
	if !strings.Contains(f.logs.String(), `"trigger":"file change"`) {
		t.Errorf("the reload does not say what triggered it: %s", f.logs.String())
	}
}

// TestReloaderWatchWaitsOutAnEmptyFile: a file caught between truncation
// and its new contents is neither applied nor rejected; the contents that
// follow are applied.
func TestReloaderWatchWaitsOutAnEmptyFile(t *testing.T) {
	f := newReloadFixture(t, "policy: {default: deny}\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { f.r.Watch(ctx, 10*time.Millisecond); close(done) }()
	if err := os.WriteFile(f.path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-f.apply.rejected:
		t.Fatalf("Watch rejected the file while it was empty: %v", err)
	case cfg := <-f.apply.applied:
		t.Fatalf("Watch applied an empty file: %+v", cfg)
	case <-time.After(200 * time.Millisecond): // 20 looks at it
	}
	f.write(t, "policy: {default: allow}\n")
	select {
	case cfg := <-f.apply.applied:
		if cfg.Policy.Default != policyconfig.PolicyDefaultAllow {
			t.Errorf("Watch applied %+v", cfg.Policy)
		}
	case err := <-f.apply.rejected:
		t.Fatalf("Watch rejected the rewritten file: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not apply the rewritten file")
	}
	cancel()
	<-done
}

func TestRestartNeeded(t *testing.T) {
	parse := func(body string) *Config {
		t.Helper()
		cfg, err := Parse(strings.NewReader(reloadUpstream + body))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	running := parse("policy: {default: deny}\n")
	for _, tc := range []struct {
		name, body, want string
	}{
		{"unchanged", "policy: {default: deny}\n", ""},
		{"policy and log_allowed are live", "policy: {default: allow, mode: audit}\naudit: {log_allowed: true}\n", ""},
		{"audit defaults spelled out", "audit: {output: stdout, buffer_size: 8192}\n", ""},
		{"audit output", "audit: {output: /tmp/audit.log}\n", "audit.output"},
		{"audit buffer", "audit: {buffer_size: 10}\n", "audit.buffer_size"},
		{"other sections", "listeners: {bootstrap_port: 9999}\nlog: {level: debug}\nlimits: {max_frame_bytes: 2000000}\n", "listeners,log,limits"},
	} {
		if got := strings.Join(RestartNeeded(running, parse(tc.body)), ","); got != tc.want {
			t.Errorf("%s: RestartNeeded = %q, want %q", tc.name, got, tc.want)
		}
	}
	moved, err := Parse(strings.NewReader("upstream: {bootstrap_servers: [\"127.0.0.1:9093\"]}\npolicy: {default: deny}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := RestartNeeded(running, moved); len(got) != 1 || got[0] != "upstream" {
		t.Errorf("another upstream: RestartNeeded = %q, want upstream", got)
	}
}
