package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/auth"
)

// Defaults applied to keys left out of the file.
const (
	DefaultDialTimeout = 10 * time.Second
	// DefaultMetadataRefresh bounds how long a node added at run time may
	// lack a listener on a replica that relayed no Metadata naming it.
	DefaultMetadataRefresh = 30 * time.Second
	DefaultIdleTimeout     = 10 * time.Minute
	DefaultShutdownTimeout = 30 * time.Second
	DefaultMaxFrameBytes   = 100 << 20
	DefaultMaxInFlight     = 1000
	// DefaultMaxBufferedBytes leaves room in a 512 MiB container for
	// one charge of overshoot (see limits.max_buffered_bytes), the
	// garbage collector's headroom and the runtime.
	DefaultMaxBufferedBytes   = 128 << 20
	DefaultEmbeddedBrokers    = 3
	DefaultEmbeddedPartitions = 6
)

// Upstream reconnect backoff defaults: 100 ms doubling to 2 s, as in
// docs/upstream.md.
const (
	DefaultReconnectBackoff    = 100 * time.Millisecond
	DefaultReconnectBackoffMax = 2 * time.Second
)

// Load reads, decodes, defaults and validates the file at path, with
// overrides set on top of it, knowing the built-in SASL mechanisms.
func Load(path string, overrides ...Override) (*Config, error) {
	return LoadWith(path, Extensions{}, overrides...)
}

// Extensions are what a program adds to the file kproxy reads: the
// sections its filters declare (filter.Factory), decoded into each
// plugin's type and validated at the top level and in each virtual
// cluster, and its SASL mechanisms (nil: the built-in ones), which the
// configuration then carries (Mechanisms).
type Extensions struct {
	Plugins    []filter.Plugin
	Mechanisms *auth.Mechanisms
}

// LoadWith is Load knowing the program's extensions.
func LoadWith(path string, ext Extensions, overrides ...Override) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open config: %w", err)
	}
	defer f.Close()
	cfg, err := ParseWith(f, ext, overrides...)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// Parse decodes YAML from r, sets the overrides, applies defaults and
// validates the result, knowing the built-in SASL mechanisms.
func Parse(r io.Reader, overrides ...Override) (*Config, error) {
	return ParseWith(r, Extensions{}, overrides...)
}

// ParseWith is Parse knowing the program's extensions (see LoadWith).
func ParseWith(r io.Reader, ext Extensions, overrides ...Override) (*Config, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	cfg := Config{mechanisms: ext.Mechanisms}
	decodeErr := dec.Decode(&cfg)
	var typeErr *yaml.TypeError
	switch {
	case errors.Is(decodeErr, io.EOF):
		decodeErr = nil
	case decodeErr != nil && !errors.As(decodeErr, &typeErr):
		return nil, decodeErr // YAML syntax: nothing was decoded
	}
	// Keys the core does not know are claimed by the filters' sections
	// or reported as unknown, with the other decoding errors.
	sectionProblems, sectionErr := cfg.claimSections(data, ext.Plugins)
	if decodeErr != nil {
		return nil, errors.Join(explainYAMLError(data, decodeErr), sectionErr)
	}
	if sectionErr != nil {
		return nil, sectionErr
	}
	sources, err := cfg.applyOverrides(overrides)
	if err != nil {
		return nil, err
	}
	cfg.inheritListeners()
	cfg.attachMechanisms()
	cfg.applyDefaults()
	if err := cfg.validate(sources, sectionProblems...); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// attachMechanisms gives every upstream.sasl section the table its
// mechanism is looked up in.
func (c *Config) attachMechanisms() {
	if c.Upstream.SASL != nil {
		c.Upstream.SASL.table = c.mechanisms
	}
	for _, vc := range c.VirtualClusters {
		if vc.Upstream != nil && vc.Upstream.SASL != nil {
			vc.Upstream.SASL.table = c.mechanisms
		}
	}
}

func (c *Config) applyDefaults() {
	c.Tracing.applyDefaults()
	c.Upstream.applyDefaults()
	c.Listeners.applyDefaults()
	c.applyVirtualDefaults()
	if c.Log.Level == "" {
		c.Log.Level = "info"
	}
	if c.Log.Format == "" {
		c.Log.Format = "json"
	}
	if c.Log.Sample == 0 {
		c.Log.Sample = DefaultLogSample
	}
	if c.Limits.MaxFrameBytes == 0 {
		c.Limits.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if c.Limits.MaxBufferedBytes == 0 {
		c.Limits.MaxBufferedBytes = max(DefaultMaxBufferedBytes, int64(c.Limits.MaxFrameBytes))
	}
	if c.Limits.IdleTimeout == 0 {
		c.Limits.IdleTimeout = DefaultIdleTimeout
	}
	if c.Limits.MaxInFlight == 0 {
		c.Limits.MaxInFlight = DefaultMaxInFlight
	}
	if c.Limits.ShutdownTimeout == 0 {
		c.Limits.ShutdownTimeout = DefaultShutdownTimeout
	}
	c.security().applyDefaults()
	for i := range c.VirtualClusters {
		c.virtualConfig(&c.VirtualClusters[i]).security().applyDefaults()
	}
	if c.Encryption != nil {
		c.Encryption.SetDefaults() // as its Validate did; for the reference's defaults
	}
	if c.LargeMessages != nil {
		c.LargeMessages.SetDefaults() // likewise
	}
}

func (u *Upstream) applyDefaults() {
	if u.DialTimeout == 0 {
		u.DialTimeout = DefaultDialTimeout
	}
	if u.MetadataRefresh == 0 {
		u.MetadataRefresh = DefaultMetadataRefresh
	}
	if u.ReconnectBackoff == 0 {
		u.ReconnectBackoff = DefaultReconnectBackoff
	}
	if u.ReconnectBackoffMax == 0 {
		u.ReconnectBackoffMax = max(DefaultReconnectBackoffMax, u.ReconnectBackoff)
	}
	if e := u.Embedded; e != nil {
		if e.Brokers == 0 {
			e.Brokers = DefaultEmbeddedBrokers
		}
		if e.DefaultPartitions == 0 {
			e.DefaultPartitions = DefaultEmbeddedPartitions
		}
	}
}

func (l *Listeners) applyDefaults() {
	if l.BindHost == "" {
		l.BindHost = "127.0.0.1"
	}
	if l.AdvertisedHost == "" && !isWildcard(l.BindHost) {
		l.AdvertisedHost = l.BindHost
	}
	if l.SNI != nil {
		l.SNI.applyDefaults(l)
	}
}

func isWildcard(host string) bool {
	return host == "0.0.0.0" || host == "::" || host == "[::]"
}
