// Package config loads and validates kproxy's YAML configuration.
//
// Key names are part of the product: they are documented in Reference
// (docs/configuration.md is generated from it) and must not change
// meaning. Unknown keys are errors, so that a typo never silently leaves
// a setting at its default.
package config

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/encryption/encryptionconfig"
	"github.com/kproxy/kproxy/internal/largemessage/largemessageconfig"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// Config is the whole kproxy configuration file.
type Config struct {
	Upstream  Upstream  `yaml:"upstream"`
	Listeners Listeners `yaml:"listeners"`
	Admin     Admin     `yaml:"admin"`
	Metrics   Metrics   `yaml:"metrics"`
	Log       Log       `yaml:"log"`
	Limits    Limits    `yaml:"limits"`
	// Policy, when set, authorizes and governs every request (see
	// docs/policy.md). It is a filter's section (policyconfig.PolicySection),
	// decoded and validated as a program's are (sections.go), here for
	// the code that reads it.
	Policy *policyconfig.Policy `yaml:"-" section:"policy"`
	// Audit says where the policy's decisions are logged.
	Audit *policyconfig.Audit `yaml:"audit"`
	// Encryption, when set, encrypts records (see docs/encryption.md). A
	// filter's section (encryptionconfig.Section), here for the
	// reference and the check across virtual clusters.
	Encryption *encryptionconfig.Config `yaml:"-" section:"encryption"`
	// LargeMessages, when set, offloads large record values to an object
	// store (see docs/large-messages.md). A filter's section
	// (largemessageconfig.Section), here for the reference.
	LargeMessages *largemessageconfig.Config `yaml:"-" section:"large_messages"`
	// Tracing exports OpenTelemetry request spans (off by default).
	Tracing Tracing `yaml:"tracing"`
	// VirtualClusters, when set, are what kproxy serves, each on its own
	// listeners (virtualcluster.go); the top-level listeners, upstream and
	// policy are then what they inherit.
	VirtualClusters []VirtualCluster `yaml:"virtual_clusters"`
	// Filters are the sections filters declare (filter.Factory), decoded
	// and validated; a virtual cluster's engine sees the top level's with
	// its own in their place.
	Filters FilterSections `yaml:"-"`
	// Unclaimed holds, while loading, the top-level keys no core section
	// has, for the filters' factories to claim (sections.go).
	Unclaimed map[string]yaml.Node `yaml:",inline"`

	// mechanisms is the SASL mechanism table the file was validated
	// against; nil: the built-in one.
	mechanisms *auth.Mechanisms
}

// Mechanisms is the SASL mechanism table the configuration was validated
// against, which its listeners and upstream login run.
func (c *Config) Mechanisms() *auth.Mechanisms { return c.mechanisms }

// Upstream says which Kafka cluster kproxy fronts.
type Upstream struct {
	// BootstrapServers are tried in order; the first reachable one serves
	// the bootstrap listener and the start-up metadata request.
	BootstrapServers []string `yaml:"bootstrap_servers"`
	// Embedded starts an in-memory cluster instead (for trying kproxy).
	Embedded *Embedded `yaml:"embedded"`
	// DialTimeout bounds each upstream connection attempt.
	DialTimeout time.Duration `yaml:"dial_timeout"`
	// ReconnectBackoff is how long kproxy waits after a failed dial before
	// it dials that upstream address again; it doubles with each further
	// failure up to ReconnectBackoffMax and resets on success. Meanwhile
	// clients of that node are refused without a dial.
	ReconnectBackoff    time.Duration `yaml:"reconnect_backoff"`
	ReconnectBackoffMax time.Duration `yaml:"reconnect_backoff_max"`
	// MetadataRefresh is how often kproxy asks the cluster for its brokers
	// on its own, so that a node added while kproxy runs gets a listener on
	// every replica, not only on those that relayed a Metadata naming it.
	MetadataRefresh time.Duration `yaml:"metadata_refresh"`
	// TLS and SASL secure kproxy's own connections to the cluster.
	TLS  *UpstreamTLS  `yaml:"tls"`
	SASL *UpstreamSASL `yaml:"sasl"`
}

// Embedded configures the in-process franz-go kfake cluster. It keeps data
// in memory only and is meant for demos and tests, not production.
type Embedded struct {
	Brokers int `yaml:"brokers"`
	// Topics are created at start-up, each with DefaultPartitions partitions.
	Topics            []string `yaml:"topics"`
	DefaultPartitions int      `yaml:"default_partitions"`
}

// Listeners says where kproxy accepts clients and what it tells them.
type Listeners struct {
	BindHost string `yaml:"bind_host"`
	// AdvertisedHost is the host clients are told for every broker. Defaults
	// to BindHost unless that is a wildcard address.
	AdvertisedHost string `yaml:"advertised_host"`
	BootstrapPort  int    `yaml:"bootstrap_port"`
	// BrokerPortBase: upstream node N is served on BrokerPortBase+N. Zero
	// lets the OS pick a port per node, which is only useful for tests: the
	// map then differs between kproxy replicas.
	BrokerPortBase int              `yaml:"broker_port_base"`
	Brokers        []BrokerOverride `yaml:"brokers"`
	// TLS and SASL secure client connections on every listener.
	TLS  *ListenerTLS  `yaml:"tls"`
	SASL *ListenerSASL `yaml:"sasl"`
	// ProxyProtocol reads the client's address from a load balancer's
	// PROXY header, before TLS.
	ProxyProtocol ProxyProtocol `yaml:"proxy_protocol"`
	// PortPerBroker, false, serves neither the bootstrap port nor the
	// broker ports (listeners.sni must then be set); nil means true.
	PortPerBroker *bool `yaml:"port_per_broker"`
	// SNI is the TLS listener routed by server name (sni.go).
	SNI *SNIListener `yaml:"sni"`
}

// BrokerPort is the port upstream node nodeID is served on, the map every
// replica with the same file shares: its listeners.brokers port override,
// else broker_port_base + node id, else 0 (base 0: any free port). It may
// exceed 65535, which the listener refuses.
func (l Listeners) BrokerPort(nodeID int32) int {
	port := 0
	if l.BrokerPortBase > 0 {
		port = l.BrokerPortBase + int(nodeID)
	}
	for _, o := range l.Brokers {
		if o.NodeID == nodeID && o.Port != 0 {
			port = o.Port
		}
	}
	return port
}

// BrokerOverride pins the port and/or advertised host of one upstream node.
type BrokerOverride struct {
	NodeID         int32  `yaml:"node_id"`
	Port           int    `yaml:"port"`
	AdvertisedHost string `yaml:"advertised_host"`
}

// Admin configures the HTTP endpoint for health, readiness and metrics.
type Admin struct {
	// Listen is host:port; empty disables the endpoint.
	Listen string `yaml:"listen"`
	// Pprof serves Go's profiler under /debug/pprof/. Off by default: a
	// profile shows internals, and a CPU profile costs CPU while it runs.
	Pprof bool `yaml:"pprof"`
}

// Metrics chooses optional metric series.
type Metrics struct {
	// PrincipalLimit > 0 counts requests by principal
	// (kproxy_principal_requests_total) for up to this many principals,
	// the rest as "other"; 0 (the default) exports no principal label.
	PrincipalLimit int `yaml:"principal_limit"`
}

// MaxPrincipalLimit bounds metrics.principal_limit: each principal is a
// series on every scrape.
const MaxPrincipalLimit = 10000

// Log configures kproxy's own logs.
type Log struct {
	Level  string `yaml:"level"`  // trace, debug, info, warn, error
	Format string `yaml:"format"` // json or console
	// Sample is the shortest interval between two lines of one repeated
	// warning (an unreachable upstream, connections closed for the same
	// fault); the lines in between are counted in the next one.
	Sample time.Duration `yaml:"sample"`
}

// DefaultLogSample is log.sample's default.
const DefaultLogSample = 10 * time.Second

// Limits bound what one connection may cost.
type Limits struct {
	// MaxFrameBytes: a larger frame closes its connection before anything
	// is allocated for it.
	MaxFrameBytes int `yaml:"max_frame_bytes"`
	// MaxBufferedBytes bounds the bytes of all requests and responses
	// kproxy holds in memory at once (frames read whole for filters, their
	// decoding, responses buffered for decoding), as Kafka's
	// queued.max.request.bytes does: beyond it kproxy stops reading from
	// the clients that want more. At least MaxFrameBytes, so any frame
	// fits.
	MaxBufferedBytes int64 `yaml:"max_buffered_bytes"`
	// IdleTimeout closes a connection pair with no traffic and nothing in
	// flight for this long (Kafka's connections.max.idle.ms is 10 minutes).
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxInFlight is how many requests one connection may have awaiting a
	// response before kproxy stops reading from it.
	MaxInFlight int `yaml:"max_in_flight"`
	// ShutdownTimeout bounds how long SIGTERM waits for in-flight requests.
	ShutdownTimeout  time.Duration `yaml:"shutdown_timeout"`
	ConnectionLimits `yaml:",inline"`
}

// security gathers the security sections for defaulting and validation.
func (c *Config) security() *Security {
	return &Security{Mechanisms: c.mechanisms, ListenerTLS: c.Listeners.TLS, ListenerSASL: c.Listeners.SASL,
		UpstreamTLS: c.Upstream.TLS, UpstreamSASL: c.Upstream.SASL, Limits: &c.Limits.ConnectionLimits}
}
