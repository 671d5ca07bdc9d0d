// Package bench is kproxy's benchmark runner (the body of
// cmd/kproxy-bench): it measures the same Kafka load sent directly to an
// upstream and through several proxies, interleaved and repeated, and
// reports medians as JSON, Markdown and a PNG chart.
//
// Targets, each a separate process except the first:
//
//   - direct: the client talks to the upstream.
//   - splice: bench/relay in splice mode (io.Copy between TCP conns).
//   - copy: bench/relay in user-space copy mode (32 KiB buffer).
//   - kproxy: the real kproxy binary, passthrough.
//   - kproxy-base: another kproxy binary (an earlier build), passthrough,
//     to compare before and after a change in one run (optional).
//   - kproxy-policy: kproxy with a 50-rule policy (optional).
//   - kproxy-vc: kproxy serving one prefixed virtual cluster (optional).
//   - kproxy-quotas: kproxy with quotas configured that the bench traffic
//     matches but never reaches (optional).
//   - kproxy-encryption: kproxy encrypting the bench topic's record values
//     with DEKs from local-kms, which the bench starts (optional); with the
//     embedded upstream it gets one of its own that serves encrypted
//     records, so that its consume loads decrypt.
//   - kproxy-large-messages: kproxy with large-message offload configured
//     for the bench topic, to SeaweedFS, which the bench starts, but not
//     triggered (optional). With it comes a one-shot measurement of one
//     large record through kproxy against the store directly.
//   - kproxy-base-policy, kproxy-base-vc, kproxy-base-quotas: the same
//     three on the kproxy-base binary, when it and the feature are both
//     asked for.
//   - kproxy-traced: kproxy with tracing at 1% sampling, exporting to an
//     OTLP/HTTP sink in the bench process (optional).
//   - tls-relay and kproxy-tls: bench/relay terminating client TLS, and
//     kproxy with a TLS listener; the client speaks TLS to both (optional).
//   - kproxy-sni: kproxy with its SNI listener alone (listeners.sni), the
//     client connecting by name to the one port (optional, with -tls).
//
// Relays are port-per-broker: one listener per upstream broker. The Kafka
// client is told the upstream's own broker addresses by Metadata, so every
// target's client dials through the same address-translation map (upstream
// broker address -> relay listener; empty for direct and kproxy, which
// advertises its own ports): see docs/performance.md.
package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Target names.
const (
	TargetDirect       = "direct"
	TargetSplice       = "splice"
	TargetCopy         = "copy"
	TargetKproxy       = "kproxy"
	TargetKproxyBase   = "kproxy-base"
	TargetKproxyPolicy = "kproxy-policy"
	TargetKproxyVC     = "kproxy-vc"
	TargetKproxyQuotas = "kproxy-quotas"
	// TargetKproxyEncryption is kproxy encrypting the bench topic.
	TargetKproxyEncryption = "kproxy-encryption"
	// TargetKproxyLargeMessages is kproxy with large-message offload
	// configured for the bench topic but not triggered.
	TargetKproxyLargeMessages = "kproxy-large-messages"
	// The base binary's feature targets: kproxy-policy, kproxy-vc and
	// kproxy-quotas run on the -kproxy-base binary.
	TargetKproxyBasePolicy = "kproxy-base-policy"
	TargetKproxyBaseVC     = "kproxy-base-vc"
	TargetKproxyBaseQuotas = "kproxy-base-quotas"
	TargetKproxyTraced     = "kproxy-traced"
	TargetTLSRelay         = "tls-relay"
	TargetKproxyTLS        = "kproxy-tls"
	TargetKproxySNI        = "kproxy-sni"
)

// AllTargets is every target in report order.
var AllTargets = []string{TargetDirect, TargetSplice, TargetCopy, TargetKproxy, TargetKproxyBase, TargetKproxyPolicy, TargetKproxyBasePolicy,
	TargetKproxyVC, TargetKproxyBaseVC, TargetKproxyQuotas, TargetKproxyBaseQuotas, TargetKproxyEncryption, TargetKproxyLargeMessages, TargetKproxyTraced, TargetTLSRelay, TargetKproxyTLS, TargetKproxySNI}

// tlsTargets are the targets a client reaches over TLS; -tls adds them.
var tlsTargets = []string{TargetTLSRelay, TargetKproxyTLS, TargetKproxySNI}

// Load names, in the order they run: the fixed-rate loads come after the
// full-speed ones because their rate adapts to what every target reached.
const (
	LoadProduce     = "produce"
	LoadConsume     = "consume"
	LoadProduceRate = "produce-rate"
	LoadConsumeRate = "consume-rate"
	LoadLatency     = "latency"
)

// AllLoads is every load in run order.
var AllLoads = []string{LoadProduce, LoadConsume, LoadProduceRate, LoadConsumeRate, LoadLatency}

// Options configure a run. Zero values take the defaults of Defaults.
type Options struct {
	Rounds   int           // repetitions of every (load, target) measurement
	Duration time.Duration // measured window of each throughput measurement
	Warmup   time.Duration // unmeasured lead-in of each measurement
	LatencyN int           // sequential produce round trips per latency measurement
	// RateMBps is the fixed rate of the *-rate loads (10^6 bytes/s). It is
	// lowered to 80% of the slowest target's median full-speed rate, so
	// every target moves the same bytes per second, unless KeepRate.
	RateMBps float64
	// KeepRate paces the *-rate loads at RateMBps whatever the targets'
	// full speed: a target that cannot carry it is reported below it.
	KeepRate    bool
	RecordBytes int // value size of produced records and synthetic fetched ones
	Partitions  int
	Brokers     int // embedded upstream brokers
	// Upstream, when set, is host:port of an existing cluster to use
	// instead of the embedded one.
	Upstream string
	Topic    string
	// Procs, when positive, sets GOMAXPROCS for every child process.
	Procs  int
	Policy bool // add the kproxy-policy target
	Quotas bool // add the kproxy-quotas target
	// VirtualCluster adds the kproxy-vc target: kproxy serving one virtual
	// cluster whose names all carry VCPrefix upstream.
	VirtualCluster bool
	// Encryption adds the kproxy-encryption target; LocalKMSBin is the
	// local-kms binary it needs.
	Encryption  bool
	LocalKMSBin string
	// LargeMessages adds the kproxy-large-messages target and the
	// one-shot large-record measurement; WeedBin is the SeaweedFS binary
	// they need. LargeRecordBytes is the one-shot record's size and
	// LargeRecordReps how often it is measured.
	LargeMessages    bool
	WeedBin          string
	LargeRecordBytes int64
	LargeRecordReps  int
	// Compression is the producer's codec: "none" or "lz4".
	Compression string
	PolicyFile  string // YAML with a top-level policy: key, replacing the generated one
	TLS         bool   // add the tls-relay, kproxy-tls and kproxy-sni targets
	Tracing     bool   // add the kproxy-traced target
	KproxyBin   string // prebuilt kproxy; empty builds ./cmd/kproxy
	// KproxyBaseBin adds the kproxy-base target: this binary, passthrough,
	// compared with kproxy (mb_per_s_vs_after, cpu_per_gib_vs_after, ...);
	// with Policy, VirtualCluster or Quotas it also adds that feature's
	// target on this binary (kproxy-base-policy, ...), compared likewise
	// with the feature's target on the current binary.
	KproxyBaseBin string
	Conns         int // idle connection pairs for the RSS-per-pair measurement; 0 skips it
	// Idle, when positive, holds every target without traffic this long
	// after start-up and reports the CPU each used meanwhile.
	Idle    time.Duration
	Targets []string
	Loads   []string
	Quick   bool
	// Self is the command that runs this tool's hidden subcommands
	// ("relay", "backend") as child processes: an executable and any
	// leading arguments. Empty means this executable.
	Self    []string
	WorkDir string // for generated configs, binaries and logs; empty: a temp dir, removed after
	Log     io.Writer
}

// Defaults is the full run: about 7 minutes on 2 cores with every target
// and -conns 10000.
func Defaults() Options {
	return Options{
		Rounds:      3,
		Duration:    5 * time.Second,
		Warmup:      time.Second,
		LatencyN:    2000,
		RateMBps:    400,
		RecordBytes: 1024,
		Partitions:  16,
		Brokers:     3,
		Topic:       "kproxy-bench",
		Compression: "none",
		Targets:     AllTargets,
		Loads:       AllLoads,

		LargeRecordBytes: 100 << 20,
		LargeRecordReps:  3,
	}
}

// QuickDefaults is the smoke-test run: well under a minute.
func QuickDefaults() Options {
	o := Defaults()
	o.Quick = true
	o.Rounds = 2
	o.Duration = 800 * time.Millisecond
	o.Warmup = 200 * time.Millisecond
	o.LatencyN = 200
	o.LargeRecordReps = 1
	return o
}

func (o *Options) validate() error {
	var bad []string
	if o.Rounds < 1 {
		bad = append(bad, "rounds must be at least 1")
	}
	if o.Duration <= 0 || o.Warmup < 0 {
		bad = append(bad, "duration must be positive and warmup not negative")
	}
	if o.LatencyN < 1 {
		bad = append(bad, "latency-n must be at least 1")
	}
	if o.RateMBps <= 0 {
		bad = append(bad, "rate must be positive")
	}
	if o.RecordBytes < 1 || o.Partitions < 1 || o.Brokers < 1 || o.Brokers > 16 {
		bad = append(bad, "record-bytes and partitions must be positive, brokers 1..16")
	}
	for _, t := range o.Targets {
		if !slices.Contains(AllTargets, t) {
			bad = append(bad, fmt.Sprintf("unknown target %q (want %s)", t, strings.Join(AllTargets, ",")))
		}
	}
	for _, l := range o.Loads {
		if !slices.Contains(AllLoads, l) {
			bad = append(bad, fmt.Sprintf("unknown load %q (want %s)", l, strings.Join(AllLoads, ",")))
		}
	}
	if o.Compression != "none" && o.Compression != "lz4" {
		bad = append(bad, fmt.Sprintf("compression %q: want none or lz4", o.Compression))
	}
	if o.Encryption && o.LocalKMSBin == "" {
		bad = append(bad, "encryption needs the local-kms binary: -localkms-bin or "+LocalKMSBinEnv)
	}
	if o.LargeMessages && o.WeedBin == "" {
		bad = append(bad, "large-messages needs the SeaweedFS weed binary: -weed-bin or "+WeedBinEnv)
	}
	if o.LargeMessages && (o.LargeRecordBytes <= largeRecordThreshold || o.LargeRecordBytes > maxLargeRecordBytes || o.LargeRecordReps < 1) {
		bad = append(bad, fmt.Sprintf("large-record-bytes must be above %d (the offload threshold) and at most %d, large-record-reps at least 1", largeRecordThreshold, maxLargeRecordBytes))
	}
	if o.Conns < 0 {
		bad = append(bad, "conns must not be negative")
	}
	if o.Idle < 0 {
		bad = append(bad, "idle must not be negative")
	}
	if len(bad) > 0 {
		return fmt.Errorf("bench options: %s", strings.Join(bad, "; "))
	}
	return nil
}

// ParseList splits a comma-separated flag value; "none" or "" is empty.
func ParseList(s string) []string {
	if s == "" || s == "none" {
		return []string{}
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
