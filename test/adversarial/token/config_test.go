package token

import "github.com/kproxy/kproxy/internal/testkit"

// oauthConfig is the configuration of the kproxy binary in front of
// upstream with listenerKeys (testkit.TerminateOAuthBearer) and the
// further sections extra: the admin endpoint and the JSON log at info
// that testkit.Binary reads.
func oauthConfig(upstream, listenerKeys, extra string) string {
	return testkit.Config{Upstream: []string{upstream}, ListenerKeys: listenerKeys, Admin: true,
		Log: "{level: info, format: json}", Extra: extra}.YAML()
}
