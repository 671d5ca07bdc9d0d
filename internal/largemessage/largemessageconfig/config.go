// Package largemessageconfig declares the `large_messages:` section of the
// configuration file: its keys, defaults and checks. The filter is in
// package largemessage; this package is what the loader needs of it.
package largemessageconfig

import (
	"fmt"
	"strings"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/objectstore"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// Config is the `large_messages:` section, at the top level or in a
// virtual cluster.
type Config struct {
	Store          StoreConfig `yaml:"store"`
	Topics         []TopicRule `yaml:"topics"`
	ResolveOnFetch *bool       `yaml:"resolve_on_fetch"`
	PointerFormat  string      `yaml:"pointer_format"`
	MaxObjectBytes int64       `yaml:"max_object_bytes"`
}

// StoreConfig says where the offloaded values go.
type StoreConfig struct {
	S3 *S3Config `yaml:"s3"`
}

// S3Config is `store.s3`: an S3 bucket, on AWS or a server speaking its
// API.
type S3Config struct {
	Endpoint  string `yaml:"endpoint"`
	Bucket    string `yaml:"bucket"`
	Region    string `yaml:"region"`
	PathStyle bool   `yaml:"path_style"`
}

// TopicRule selects the topics whose large records are offloaded, and
// which records are.
type TopicRule struct {
	Match          string `yaml:"match"`
	ThresholdBytes int64  `yaml:"threshold_bytes"`
	HeaderTrigger  string `yaml:"header_trigger"`
}

// The one pointer format.
const PointerFormatKafScale = "kafscale"

// Defaults of the keys left out.
const (
	// DefaultThresholdBytes is a broker's default message.max.bytes: a
	// value above it would not fit a batch the broker accepts.
	DefaultThresholdBytes = 1 << 20
	// DefaultHeaderTrigger is KafScale's producer header.
	DefaultHeaderTrigger = "LFS_BLOB"
	// DefaultMaxObjectBytes is S3's largest object in one PUT (5 GiB).
	DefaultMaxObjectBytes = 5 << 30
)

// maxObjectBytesLimit is the largest value a multipart upload of default
// parts can hold.
const maxObjectBytesLimit = objectstore.DefaultPartSize * 10000

// SetDefaults fills the keys left out.
func (c *Config) SetDefaults() {
	if c.ResolveOnFetch == nil {
		resolve := true
		c.ResolveOnFetch = &resolve
	}
	if c.PointerFormat == "" {
		c.PointerFormat = PointerFormatKafScale
	}
	if c.MaxObjectBytes == 0 {
		c.MaxObjectBytes = DefaultMaxObjectBytes
	}
	for i := range c.Topics {
		t := &c.Topics[i]
		if t.ThresholdBytes == 0 {
			t.ThresholdBytes = DefaultThresholdBytes
		}
		if t.HeaderTrigger == "" {
			t.HeaderTrigger = DefaultHeaderTrigger
		}
	}
}

// Resolves reports resolve_on_fetch, after SetDefaults.
func (c *Config) Resolves() bool { return c.ResolveOnFetch == nil || *c.ResolveOnFetch }

// validate checks the section after SetDefaults, naming each key at
// fault.
func (c *Config) validate(bad *filter.Problems) {
	if c.Store.S3 == nil {
		bad.Add("store", "set store.s3: the bucket the offloaded values go to")
	} else if err := c.Store.S3.Store().Validate(); err != nil {
		// The store names its keys from the top level; here they are the
		// section's, at the top level or in a virtual cluster.
		bad.Add("", "%s", strings.TrimPrefix(err.Error(), SectionName+"."))
	}
	if c.PointerFormat != PointerFormatKafScale {
		bad.Add("pointer_format", "%q: want %s (KafScale's LFS envelope)", c.PointerFormat, PointerFormatKafScale)
	}
	if c.MaxObjectBytes < 1 || c.MaxObjectBytes > maxObjectBytesLimit {
		bad.Add("max_object_bytes", "%d: between 1 and %d bytes", c.MaxObjectBytes, int64(maxObjectBytesLimit))
	}
	if len(c.Topics) == 0 {
		bad.Add("topics", "list at least one topic rule: without one nothing is offloaded")
	}
	for i, r := range c.Topics {
		at := fmt.Sprintf("topics[%d]", i)
		if _, err := policyconfig.ParsePattern(r.Match); err != nil {
			bad.Add(at+".match", "%v", err)
		}
		if r.ThresholdBytes < 1 {
			bad.Add(at+".threshold_bytes", "%d: at least 1 (values larger than this are offloaded)", r.ThresholdBytes)
		}
		if strings.TrimSpace(r.HeaderTrigger) != r.HeaderTrigger {
			bad.Add(at+".header_trigger", "%q: a header name without surrounding spaces", r.HeaderTrigger)
		}
	}
}

// Store is the object store's configuration.
func (s *S3Config) Store() objectstore.Config {
	return objectstore.Config{Endpoint: s.Endpoint, Bucket: s.Bucket, Region: s.Region, PathStyle: s.PathStyle}
}
