package config

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/periodic"
)

// Applier applies the sections of a reloaded configuration that can change
// under a running kproxy (the policy and audit.log_allowed; see
// RestartNeeded). A Reloader calls it with its lock held, one reload at a
// time.
type Applier interface {
	// ApplyConfig is handed each new, loaded and valid configuration. log
	// carries the reload's trigger and file; ApplyConfig logs the outcome.
	// An error means what was in force stays.
	ApplyConfig(cfg *Config, log zerolog.Logger) error
	// ConfigRejected is told that a reload found the file unreadable or
	// invalid (err names the problem); nothing was applied.
	ConfigRejected(err error)
}

// Reloader loads kproxy's configuration file again when asked (SIGHUP) or
// when the file changes, and hands it to an Applier. The whole file is
// loaded and validated first: an invalid file is rejected with a log line
// naming the problem, and what is in force stays. Sections that cannot
// change under a running proxy are compared with the file as kproxy
// started; changes to them are logged as needing a restart.
type Reloader struct {
	path    string
	apply   Applier
	log     zerolog.Logger
	mu      sync.Mutex
	running *Config // as loaded at start, before kproxy amended it
	stamp   fileStamp
	// overrides are applied to every load, as to the first: without them
	// a file valid only with its overrides would be rejected, and every
	// overridden key would look changed.
	overrides []Override
	// plugins decode the filters' sections of every load, as of the first.
	plugins []filter.Plugin
}

type fileStamp struct {
	mod  time.Time
	size int64
}

// NewReloader watches path, whose contents at start were running, and
// hands each reloaded configuration, loaded with overrides, to apply.
func NewReloader(path string, running *Config, apply Applier, log zerolog.Logger, overrides ...Override) *Reloader {
	r := &Reloader{path: path, apply: apply, log: log, running: running, overrides: overrides}
	r.stamp, _ = statFile(path)
	return r
}

// WithFilters makes every reload decode the sections plugins declare, as
// the load at start did; it returns r.
func (r *Reloader) WithFilters(plugins []filter.Plugin) *Reloader {
	r.plugins = plugins
	return r
}

// RestartNeededMessage is the log message of a reloaded key whose change
// applies only at the next restart; its "section" field names the key.
const RestartNeededMessage = "configuration section changed; it takes effect only after a restart"

// Reload loads the file and applies it. trigger says why, for the log
// ("sighup", "file change"). The error is the load's or the Applier's.
func (r *Reloader) Reload(trigger string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, err := statFile(r.path); err == nil {
		r.stamp = st
	}
	log := r.log.With().Str("trigger", trigger).Str("config", r.path).Logger()
	cfg, err := LoadWith(r.path, Extensions{Plugins: r.plugins, Mechanisms: r.running.Mechanisms()}, r.overrides...)
	if err != nil {
		r.apply.ConfigRejected(err)
		log.Error().Err(err).Msg("configuration reload rejected; the policy in force stays")
		return err
	}
	for _, key := range restartNeeded(r.running, cfg, r.plugins) {
		log.Warn().Str("section", key).Msg(RestartNeededMessage)
	}
	return r.apply.ApplyConfig(cfg, log)
}

// Watch polls the file's modification time and size every interval and
// reloads when either changes, until ctx ends. Polling needs no extra
// dependency and notices editors that replace the file.
func (r *Reloader) Watch(ctx context.Context, interval time.Duration) {
	periodic.Every(ctx, interval, r.reloadIfChanged)
}

// reloadIfChanged is one look of Watch at the file.
func (r *Reloader) reloadIfChanged() {
	st, err := statFile(r.path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			r.log.Warn().Err(err).Str("config", r.path).Msg("cannot stat configuration file")
		}
		return
	}
	r.mu.Lock()
	changed := st != r.stamp
	r.mu.Unlock()
	if changed && st.size == 0 {
		// Truncated and not yet rewritten (os.WriteFile, many editors):
		// no configuration is empty, so wait for the next look rather
		// than reject it. SIGHUP still reloads, and rejects, an empty file.
		return
	}
	if changed {
		r.Reload("file change")
	}
}

func statFile(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size()}, nil
}
