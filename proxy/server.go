package proxy

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/sasl"
)

// Options say how Run runs kproxy. Only ConfigPath is required.
type Options struct {
	// ConfigPath is kproxy's YAML configuration file, as documented in
	// docs/configuration.md. A change to its policy section applies while kproxy
	// runs; other sections need a restart.
	ConfigPath string
	// Overrides set keys on top of the file, in order (a later one wins).
	Overrides []Override
	// Filters see requests and responses after kproxy's policy, in order.
	Filters []filter.Filter
	// Plugins are the program's filters that have their own section of the
	// configuration file (filter.Factory): the file's section, at the top
	// level or in a virtual cluster, is decoded, validated and handed to
	// the factory, which builds the cluster's filter. A section no plugin
	// (and no core key) claims is an unknown key. Within a phase, their
	// filters run in this order, before Filters.
	Plugins []filter.Plugin
	// Mechanisms are SASL mechanisms the program adds to kproxy's own
	// (see package sasl): listeners.sasl.mechanisms may then list them.
	Mechanisms []sasl.Mechanism
	// Logger receives kproxy's logs. When nil, kproxy logs as the file's
	// log section says, to LogOutput (nil: standard output).
	Logger    *zerolog.Logger
	LogOutput io.Writer
	// Reload, when set, reloads the policy each time it receives, as a
	// change to the file does (the kproxy command sends SIGHUP here).
	Reload <-chan os.Signal
	// SkipFileChecks makes Validate leave the files and secrets the
	// configuration names unread: for a file written for another machine
	// (a pod's mounted Secrets).
	SkipFileChecks bool
	// Version and Commit label kproxy_build_info ("unknown" when empty);
	// the kproxy command passes what -ldflags set.
	Version, Commit string
	// Started, when set, is called once every listener and the admin
	// endpoint are bound, before Run serves: for a program (or a test) that
	// lets the system choose the ports and needs to know them.
	Started func(Started)
}

// Override sets one configuration key, such as listeners.bind_host, on
// top of the file: for the settings that differ per deployment (a
// container's bind address, advertised host and ports). The value is
// validated as the file's would be; errors name Source (where the value
// came from, such as an environment variable).
type Override struct {
	Key, Value, Source string
}

// OverridableKeys lists the keys an Override may set.
func OverridableKeys() []string { return config.OverridableKeys() }

// Validate loads the configuration as Run would, without serving it, and
// reads every file and secret it names (unless Options.SkipFileChecks).
// It returns every problem, each naming its key, or else the warnings about
// policy rules a client can sidestep (the file is valid, and may mean
// them).
func Validate(opts Options) (warnings []string, err error) {
	cfg, err := opts.load(opts.configOverrides())
	if err != nil {
		return nil, err
	}
	if !opts.SkipFileChecks {
		if err := checkFiles(cfg); err != nil {
			return nil, err
		}
	}
	return cfg.PolicyWarnings(), nil
}

// Run runs kproxy until ctx ends, then drains in-flight requests for up
// to limits.shutdown_timeout. It returns an error if the configuration
// is invalid, a listener cannot be bound, or the drain timed out.
func Run(ctx context.Context, opts Options) error {
	overrides := opts.configOverrides()
	cfg, err := opts.load(overrides)
	if err != nil {
		return err
	}
	// The same file checks as Validate's, so that both name the key.
	if err := checkFiles(cfg); err != nil {
		return err
	}
	return serve(ctx, cfg, overrides, opts)
}

func (o Options) configOverrides() []config.Override {
	overrides := make([]config.Override, len(o.Overrides))
	for i, ov := range o.Overrides {
		overrides[i] = config.Override(ov)
	}
	return overrides
}

// load loads the configuration file knowing the plugins' sections and
// the program's SASL mechanisms.
func (o Options) load(overrides []config.Override) (*config.Config, error) {
	if err := config.CheckPlugins(o.Plugins); err != nil {
		return nil, err
	}
	table, err := auth.NewMechanisms(o.Mechanisms...)
	if err != nil {
		return nil, fmt.Errorf("proxy.Options.Mechanisms: %w", err)
	}
	return config.LoadWith(o.ConfigPath, config.Extensions{Plugins: o.Plugins, Mechanisms: table}, overrides...)
}
