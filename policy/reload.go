package policy

import (
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// ReloadApplier is what a config.Reloader hands each reloaded file to:
// the file's policy section replaces enf's (counted in its reload
// metrics, as are files the Reloader rejected). With enf nil, kproxy
// started without a policy: a policy section in the file only draws a
// warning that enforcing it needs a restart.
func ReloadApplier(enf *Enforcer) config.Applier { return reloadApplier{enf: enf} }

// ClusterReloadApplier is ReloadApplier for the policy of the virtual
// cluster named virtualCluster ("" without virtual clusters), whose
// connections carry that name: the reload's diff asks its questions as
// theirs.
func ClusterReloadApplier(enf *Enforcer, virtualCluster string) config.Applier {
	return reloadApplier{enf: enf, virtualCluster: virtualCluster}
}

type reloadApplier struct {
	enf            *Enforcer
	virtualCluster string
}

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
	var before *policyconfig.Policy
	if st := a.enf.cur.Load(); st != nil {
		before = st.policy
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
	ev := log.Info().Str("policy", desc)
	d, err := Diff(before, authorizes, a.virtualCluster)
	if err != nil {
		ev = ev.AnErr("diff_error", err)
	} else {
		logDiff(ev, &d, log)
	}
	ev.Msg("policy reloaded; applies to the next request on every connection")
	return nil
}

// reloadChangesLogged is how many changes the reload's info line lists;
// the debug line that follows lists them all.
const reloadChangesLogged = 10

// logDiff adds d's counts and first changes to ev, and logs every change
// at debug level.
func logDiff(ev *zerolog.Event, d *PolicyDiff, log zerolog.Logger) {
	gained, lost := d.Counts()
	lines := d.Lines()
	ev.Int("access_gained", gained).Int("access_lost", lost).Int("governance_changes", len(d.Governance)).
		Int("quota_changes", len(d.Quotas)).Strs("changes", lines[:min(len(lines), reloadChangesLogged)])
	if len(d.Settings) > 0 {
		ev.Strs("settings", d.Settings)
	}
	if len(lines) > reloadChangesLogged {
		log.Debug().Strs("changes", lines).Msg("policy reload: every change in access, governance and quotas")
	}
}
