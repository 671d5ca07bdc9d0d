package config

import (
	"crypto/sha256"
	"encoding/hex"

	"gopkg.in/yaml.v3"
)

// Hash identifies c's settings: the first 16 hex digits of the SHA-256 of
// its redacted YAML encoding. Equal settings hash alike on every replica;
// secrets are left out, so that the hash (a metric label) reveals nothing
// about them, and changing only a secret keeps it.
func (c *Config) Hash() string {
	out, err := yaml.Marshal(c.Redacted())
	if err != nil { // cannot happen for a Config: plain data
		return "unknown"
	}
	sum := sha256.Sum256(out)
	return hex.EncodeToString(sum[:8])
}
