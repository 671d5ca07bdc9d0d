package policy

import (
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/config"
)

// ReloadApplier is what a config.Reloader hands each reloaded file to:
// the file's policy section replaces enf's (counted in its reload
// metrics, as are files the Reloader rejected). With enf nil, kproxy
// started without a policy: a policy section in the file only draws a
// warning that enforcing it needs a restart.
func ReloadApplier(enf *Enforcer) config.Applier { return reloadApplier{enf: enf} }

type reloadApplier struct{ enf *Enforcer }

// ConfigRejected counts a file the Reloader could not load or validate.
func (a reloadApplier) ConfigRejected(error) {
	if a.enf != nil {
		a.enf.reloadFailed()
	}
}

// ApplyConfig swaps in cfg's policy and logs the outcome; on error the
// policy in force stays.
func (a reloadApplier) ApplyConfig(cfg *config.Config, log zerolog.Logger) error {
	authorizes := cfg.Policy.Authorizes() // nil for quotas alone (the quota engine's)
	if a.enf == nil {
		if authorizes != nil {
			log.Warn().Msg("policy section added, but kproxy started without one: restart to enforce it")
		}
		return nil
	}
	if err := a.enf.Reload(authorizes, cfg.Audit); err != nil {
		log.Error().Err(err).Msg("policy reload rejected; the policy in force stays")
		return err
	}
	if authorizes == nil {
		log.Warn().Msg("policy section removed: requests are forwarded unchecked (restart to stop decoding them)")
		return nil
	}
	_, desc := a.enf.Active()
	log.Info().Str("policy", desc).Msg("policy reloaded; applies to the next request on every connection")
	return nil
}
