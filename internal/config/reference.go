package config

import (
	"strings"

	"github.com/kproxy/kproxy/filter"
)

// KeyDoc documents one key of the configuration file for users. The
// reference (docs/configuration.md), `kproxy config schema` and `kproxy
// config defaults` are all generated from Reference, and a test holds it
// to the Config type: a key without a row, or a row naming no key, fails.
// A section's rows come from its feature's package (filter.KeyDoc).
type KeyDoc = filter.KeyDoc

// SharedSection is a place in the file that takes the keys of another
// section. Its rows are the other section's: one row documents
// listeners.tls.client_auth for listeners.sni.tls.client_auth and
// virtual_clusters[].listeners.tls.client_auth alike.
type SharedSection struct {
	At, SameAs string
}

// SharedSections lists where the file repeats a section.
func SharedSections() []SharedSection {
	return []SharedSection{
		{At: "virtual_clusters[].listeners", SameAs: "listeners"},
		{At: "virtual_clusters[].upstream", SameAs: "upstream"},
		{At: "virtual_clusters[].policy", SameAs: "policy"},
		{At: "virtual_clusters[].encryption", SameAs: "encryption"},
		{At: "virtual_clusters[].large_messages", SameAs: "large_messages"},
		{At: "listeners.sni.tls", SameAs: "listeners.tls"},
	}
}

// CanonicalKey is the key whose row documents key: a key inside a shared
// section is documented under the section it repeats.
func CanonicalKey(key string) string {
	for changed := true; changed; {
		changed = false
		for _, s := range SharedSections() {
			if rest, ok := strings.CutPrefix(key, s.At+"."); ok {
				key, changed = s.SameAs+"."+rest, true
			}
		}
	}
	return key
}

// LookupKey returns the row documenting key (written as in Reference, or
// inside a shared section).
func LookupKey(key string) (KeyDoc, bool) {
	key = CanonicalKey(key)
	for _, d := range Reference() {
		if d.Key == key {
			return d, true
		}
	}
	return KeyDoc{}, false
}
