// Package encryptionconfig declares the `encryption:` section of the
// configuration file: its keys, defaults and checks. The filter is in
// package encryption; this package is what the loader needs of it.
package encryptionconfig

import (
	"fmt"
	"time"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/kms"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// Config is the `encryption:` section, at the top level or in a virtual
// cluster.
type Config struct {
	KMS          KMSConfig   `yaml:"kms"`
	Topics       []TopicRule `yaml:"topics"`
	DEK          DEKConfig   `yaml:"dek"`
	OnMissingKey string      `yaml:"on_missing_key"`
}

// KMSConfig says which KMS holds the key-encryption keys.
type KMSConfig struct {
	AWSKMS *AWSKMSConfig `yaml:"aws_kms"`
}

// AWSKMSConfig is `kms.aws_kms`: AWS KMS, or a KMS speaking its API.
type AWSKMSConfig struct {
	Endpoint string `yaml:"endpoint"`
	Region   string `yaml:"region"`
}

// TopicRule selects the topics whose records are encrypted, under which
// key, and which parts of them.
type TopicRule struct {
	Match   string   `yaml:"match"`
	Key     string   `yaml:"key"`
	Encrypt []string `yaml:"encrypt"`
}

// DEKConfig bounds the reuse of one data key.
type DEKConfig struct {
	MaxAge     time.Duration `yaml:"max_age"`
	MaxRecords int64         `yaml:"max_records"`
}

// The values of encrypt and on_missing_key.
const (
	PartValue   = "value"
	PartHeaders = "headers"

	MissingKeyReject      = "reject"
	MissingKeyPassthrough = "passthrough"
)

// Defaults of the keys left out.
const (
	DefaultMaxAge     = time.Hour
	DefaultMaxRecords = 5_000_000
)

// partsPerRecordWithHeaders is how many sealed parts a record with its
// headers encrypted counts for at load against the envelope's bound per
// DEK (the value and up to 15 header values); a record with more only
// retires its DEK sooner at run time.
const partsPerRecordWithHeaders = 16

// SetDefaults fills the keys left out.
func (c *Config) SetDefaults() {
	if c.DEK.MaxAge == 0 {
		c.DEK.MaxAge = DefaultMaxAge
	}
	if c.DEK.MaxRecords == 0 {
		c.DEK.MaxRecords = DefaultMaxRecords
	}
	if c.OnMissingKey == "" {
		c.OnMissingKey = MissingKeyReject
	}
	for i := range c.Topics {
		if len(c.Topics[i].Encrypt) == 0 {
			c.Topics[i].Encrypt = []string{PartValue}
		}
	}
}

// validate checks the section after SetDefaults, naming each key at
// fault.
func (c *Config) validate(bad *filter.Problems) {
	if c.KMS.AWSKMS == nil {
		bad.Add("kms", "set kms.aws_kms: the KMS holding the key-encryption keys")
	} else if err := c.KMS.AWSKMS.Provider().Validate(); err != nil {
		bad.Add("kms.aws_kms", "%v", err)
	}
	if err := c.DataKeys().Validate(); err != nil {
		bad.Add("", "%v", err) // the message names dek.max_age or dek.max_records
	}
	if c.OnMissingKey != MissingKeyReject && c.OnMissingKey != MissingKeyPassthrough {
		bad.Add("on_missing_key", "%q: want %s or %s", c.OnMissingKey, MissingKeyReject, MissingKeyPassthrough)
	}
	if len(c.Topics) == 0 {
		bad.Add("topics", "list at least one topic rule: without one nothing is encrypted")
	}
	maxParts := int64(0)
	for i, r := range c.Topics {
		at := fmt.Sprintf("topics[%d]", i)
		if _, err := policyconfig.ParsePattern(r.Match); err != nil {
			bad.Add(at+".match", "%v", err)
		}
		if _, err := kms.ParseKeyTemplate(at+".key", r.Key); err != nil {
			bad.Add(at+".key", "%v", err)
		}
		parts, err := ParseParts(r.Encrypt)
		if err != nil {
			bad.Add(at+".encrypt", "%v", err)
		}
		maxParts = max(maxParts, partsPerRecord(parts))
	}
	if maxParts > 0 && c.DEK.MaxRecords > envelope.MaxSealsPerDEK/maxParts {
		bad.Add("dek.max_records", "%d: with %d sealed parts per record (headers count for %d) a data key would seal more than the envelope's %d parts; at most %d",
			c.DEK.MaxRecords, maxParts, partsPerRecordWithHeaders, int64(envelope.MaxSealsPerDEK), envelope.MaxSealsPerDEK/maxParts)
	}
}

// ParseParts is an encrypt list as envelope parts.
func ParseParts(list []string) (envelope.Parts, error) {
	var parts envelope.Parts
	for _, p := range list {
		switch p {
		case PartValue:
			parts |= envelope.Value
		case PartHeaders:
			parts |= envelope.HeaderValues
		default:
			return 0, fmt.Errorf("%q: want %s or %s (keys stay in the clear)", p, PartValue, PartHeaders)
		}
	}
	if parts == 0 {
		return 0, fmt.Errorf("list %s, %s or both", PartValue, PartHeaders)
	}
	return parts, nil
}

// partsPerRecord is how many parts a record counts for at load.
func partsPerRecord(parts envelope.Parts) int64 {
	if parts&envelope.HeaderValues != 0 {
		return partsPerRecordWithHeaders
	}
	return 1
}

// Provider is the AWS KMS provider's configuration.
func (a *AWSKMSConfig) Provider() kms.AWSConfig {
	return kms.AWSConfig{Endpoint: a.Endpoint, Region: a.Region}
}

// DataKeys is the DEK cache's configuration.
func (c *Config) DataKeys() kms.DataKeysConfig {
	return kms.DataKeysConfig{MaxAge: c.DEK.MaxAge, MaxRecords: c.DEK.MaxRecords}
}

// KeyUses are the section's key templates as virtual cluster vc uses
// them, at path (the section's configuration key), for the check across
// virtual clusters.
func (c *Config) KeyUses(path, vc string) []kms.KeyUse {
	var uses []kms.KeyUse
	for i, r := range c.Topics {
		at := fmt.Sprintf("%s.topics[%d].key", path, i)
		if t, err := kms.ParseKeyTemplate(at, r.Key); err == nil {
			uses = append(uses, kms.KeyUse{Path: at, VirtualCluster: vc, Template: t})
		}
	}
	return uses
}
