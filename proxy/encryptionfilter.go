package proxy

import (
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/encryption"
	"github.com/kproxy/kproxy/internal/encryption/encryptionconfig"
)

// encryptionFactory is record encryption's section
// (encryptionconfig.Section) completed with what builds and reloads a
// cluster's filter: records are bound to the broker-side topic names, so
// each virtual cluster's filter knows its topic prefix.
func encryptionFactory(cfg *config.Config) filter.Factory[encryptionconfig.Config] {
	prefixes := map[string]string{}
	for _, cl := range cfg.Clusters() {
		prefixes[cl.Name] = cl.TopicPrefix
	}
	f := encryptionconfig.Section()
	f.New = func(c *encryptionconfig.Config, env filter.Env) (filter.Filter, error) {
		return encryption.New(c, encryption.Options{Env: env, TopicPrefix: prefixes[env.VirtualCluster]})
	}
	f.Reload = func(flt filter.Filter, c *encryptionconfig.Config, log zerolog.Logger) error {
		return flt.(*encryption.Filter).Reload(c, log)
	}
	return f
}
