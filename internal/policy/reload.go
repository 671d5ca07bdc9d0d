package policy

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/config"
)

// Reloader applies the policy section of kproxy's configuration file again
// when asked (SIGHUP) or when the file changes. The whole file is loaded
// and validated first: an invalid file is rejected with a log line naming
// the problem, and the policy in force stays. Other sections cannot change
// under a running proxy; changes to them are logged as needing a restart.
type Reloader struct {
	path    string
	enf     *Enforcer // nil when kproxy runs without a policy
	log     zerolog.Logger
	mu      sync.Mutex
	running *config.Config // as loaded at start, before kproxy amended it
	// overrides are set on top of the file at every load, as at start.
	overrides []config.Override
	stamp     fileStamp
}

type fileStamp struct {
	mod  time.Time
	size int64
}

// NewReloader watches path, whose contents at start were running. enf is
// the enforcer to update, or nil if kproxy started without a policy;
// overrides are those running was loaded with.
func NewReloader(path string, running *config.Config, enf *Enforcer, log zerolog.Logger, overrides ...config.Override) *Reloader {
	r := &Reloader{path: path, enf: enf, log: log, running: running, overrides: overrides}
	r.stamp, _ = statFile(path)
	return r
}

// Reload loads the file and applies its policy. trigger says why, for the
// log ("sighup", "file change").
func (r *Reloader) Reload(trigger string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, err := statFile(r.path); err == nil {
		r.stamp = st
	}
	log := r.log.With().Str("trigger", trigger).Str("config", r.path).Logger()
	cfg, err := config.Load(r.path, r.overrides...)
	if err != nil {
		if r.enf != nil {
			r.enf.reloadFailed()
		}
		log.Error().Err(err).Msg("configuration reload rejected; the policy in force stays")
		return err
	}
	for _, key := range restartNeeded(r.running, cfg) {
		log.Warn().Str("section", key).Msg("configuration section changed; it takes effect only after a restart")
	}
	if r.enf == nil {
		if cfg.Policy != nil {
			log.Warn().Msg("policy section added, but kproxy started without one: restart to enforce it")
		}
		return nil
	}
	if err := r.enf.Reload(cfg.Policy, cfg.Audit); err != nil {
		log.Error().Err(err).Msg("policy reload rejected; the policy in force stays")
		return err
	}
	if cfg.Policy == nil {
		log.Warn().Msg("policy section removed: requests are forwarded unchecked (restart to stop decoding them)")
		return nil
	}
	_, desc := r.enf.Active()
	log.Info().Str("policy", desc).Msg("policy reloaded; applies to the next request on every connection")
	return nil
}

// Watch polls the file's modification time and size every interval and
// reloads when either changes, until ctx ends. Polling needs no extra
// dependency and notices editors that replace the file.
func (r *Reloader) Watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := statFile(r.path)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				r.log.Warn().Err(err).Str("config", r.path).Msg("cannot stat configuration file")
			}
			continue
		}
		r.mu.Lock()
		changed := st != r.stamp
		r.mu.Unlock()
		if changed {
			r.Reload("file change")
		}
	}
}

func statFile(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size()}, nil
}

// restartNeeded names the top-level sections (by their YAML keys) that
// differ between the running configuration and a new one, other than what
// a reload applies: the policy and audit.log_allowed. It walks every field
// of config.Config, so sections added later are covered too.
func restartNeeded(old, cur *config.Config) []string {
	var keys []string
	ov, cv := reflect.ValueOf(*old), reflect.ValueOf(*cur)
	for i := 0; i < ov.NumField(); i++ {
		f := ov.Type().Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "" {
			key = f.Name
		}
		switch key {
		case "policy":
		case "audit":
			if auditOutput(old.Audit) != auditOutput(cur.Audit) {
				keys = append(keys, "audit.output")
			}
			if auditBuffer(old.Audit) != auditBuffer(cur.Audit) {
				keys = append(keys, "audit.buffer_size")
			}
		default:
			if !reflect.DeepEqual(ov.Field(i).Interface(), cv.Field(i).Interface()) {
				keys = append(keys, key)
			}
		}
	}
	return keys
}

func auditOutput(a *config.Audit) string {
	if a == nil || a.Output == "" {
		return config.AuditStdout
	}
	return a.Output
}

func auditBuffer(a *config.Audit) int {
	if a == nil || a.BufferSize == 0 {
		return config.DefaultAuditBufferSize
	}
	return a.BufferSize
}
