package proxy

import (
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/largemessage"
	"github.com/kproxy/kproxy/internal/largemessage/largemessageconfig"
)

// largeMessageFactory is large message offload's section
// (largemessageconfig.Section) completed with what builds and reloads a
// cluster's filter. It is added after encryptionFactory: in the same
// phase, a produce is encrypted before it is offloaded, and a fetch
// resolved before it is decrypted.
func largeMessageFactory() filter.Factory[largemessageconfig.Config] {
	f := largemessageconfig.Section()
	f.New = func(c *largemessageconfig.Config, env filter.Env) (filter.Filter, error) {
		return largemessage.New(c, largemessage.Options{Env: env})
	}
	f.Reload = func(flt filter.Filter, c *largemessageconfig.Config, log zerolog.Logger) error {
		return flt.(*largemessage.Filter).Reload(c, log)
	}
	return f
}
