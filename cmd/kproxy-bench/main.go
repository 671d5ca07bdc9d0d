// Command kproxy-bench measures kproxy against a direct connection and two
// reference relays with the same Kafka load, interleaved and repeated, and
// writes the medians as JSON, Markdown and a PNG chart. See
// docs/performance.md.
//
//	go run ./cmd/kproxy-bench -json bench.json -md bench.md -png bench.png
//	go run ./cmd/kproxy-bench -quick              # smoke test, under a minute
//	go run ./cmd/kproxy-bench -conns 10000 -loads none
//	go run ./cmd/kproxy-bench -vc -targets kproxy    # prefixed virtual cluster vs passthrough
//
// It re-executes itself with the hidden subcommands "relay" (the reference
// relays) and "backend" (the stand-in upstream of -conns) to run them as
// processes of their own.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kproxy/kproxy/bench"
	"github.com/kproxy/kproxy/bench/relay"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "relay": // hidden: a reference relay process
			return relay.Main(args[1:], stdin, stdout, stderr)
		case "backend": // hidden: the stand-in upstream of -conns
			return bench.BackendMain(args[1:], stdin, stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("kproxy-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	d := bench.Defaults()
	quick := fs.Bool("quick", false, "short durations for a smoke test (under a minute); explicit flags still win")
	rounds := fs.Int("rounds", d.Rounds, "repetitions of every load on every target; medians are reported")
	duration := fs.Duration("duration", d.Duration, "measured window of each throughput measurement")
	warmup := fs.Duration("warmup", d.Warmup, "unmeasured lead-in of each measurement")
	latencyN := fs.Int("latency-n", d.LatencyN, "sequential produce round trips per latency measurement")
	rate := fs.Float64("rate", d.RateMBps, "MB/s of the fixed-rate loads (lowered to 80% of the slowest target's full speed if that is less)")
	recordBytes := fs.Int("record-bytes", d.RecordBytes, "record value size")
	partitions := fs.Int("partitions", d.Partitions, "partitions of the bench topic")
	brokers := fs.Int("brokers", d.Brokers, "brokers of the embedded upstream")
	upstream := fs.String("upstream", "", "host:port of an existing cluster to use instead of the embedded synthetic one")
	topic := fs.String("topic", d.Topic, "topic to produce to and consume from")
	procs := fs.Int("procs", 0, "GOMAXPROCS for every child process (relays, kproxy); 0 leaves it to the environment")
	policy := fs.Bool("policy", false, "add the kproxy-policy target (kproxy with a 50-rule policy); skipped with a note if kproxy rejects the policy")
	vc := fs.Bool("vc", false, "add the kproxy-vc target (kproxy serving one virtual cluster with prefix "+bench.VCPrefix+" on every name); skipped with a note if kproxy rejects virtual_clusters")
	quotas := fs.Bool("quotas", false, "add the kproxy-quotas target (kproxy with quotas configured, one matching the bench traffic with limits it never reaches)")
	tracing := fs.Bool("tracing", false, "add the kproxy-traced target (kproxy with tracing at 1% sampling, exporting to an OTLP/HTTP sink in this process)")
	withTLS := fs.Bool("tls", false, "add the tls-relay, kproxy-tls and kproxy-sni targets: the client speaks TLS to a TLS-terminating relay, to kproxy with TLS listeners, and to kproxy's SNI listener (one port, routed by server name)")
	policyFile := fs.String("policy-file", "", "YAML file holding a top-level policy: block to use instead of the generated 50-rule one (implies -policy)")
	kproxyBin := fs.String("kproxy-bin", "", "prebuilt kproxy binary (default: go build ./cmd/kproxy of this module)")
	kproxyBase := fs.String("kproxy-base", "", "add the kproxy-base target: this prebuilt kproxy binary (e.g. built from the commit before a change), passthrough, compared with kproxy in the same run")
	conns := fs.Int("conns", 0, "also measure RSS per idle connection pair with this many connections (e.g. 10000)")
	targets := fs.String("targets", strings.Join(d.Targets, ","), "comma-separated targets: "+strings.Join(bench.AllTargets, ","))
	loads := fs.String("loads", strings.Join(d.Loads, ","), "comma-separated loads, or none: "+strings.Join(bench.AllLoads, ","))
	jsonPath := fs.String("json", "", "write the report as JSON to this file")
	mdPath := fs.String("md", "", "write the report as Markdown to this file")
	pngPath := fs.String("png", "", "write the chart to this PNG file")
	workDir := fs.String("workdir", "", "keep generated configs, binaries and child logs here (default: a temp dir, removed)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "kproxy-bench: unexpected arguments:", fs.Args())
		return 2
	}

	o := d
	if *quick {
		o = bench.QuickDefaults()
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	pick := func(name string, apply func()) {
		if set[name] {
			apply()
		}
	}
	pick("rounds", func() { o.Rounds = *rounds })
	pick("duration", func() { o.Duration = *duration })
	pick("warmup", func() { o.Warmup = *warmup })
	pick("latency-n", func() { o.LatencyN = *latencyN })
	o.RateMBps = *rate
	o.RecordBytes = *recordBytes
	o.Partitions = *partitions
	o.Brokers = *brokers
	o.Upstream = *upstream
	o.Topic = *topic
	o.Procs = *procs
	o.Policy = *policy || *policyFile != ""
	o.PolicyFile = *policyFile
	o.Quotas = *quotas
	o.TLS = *withTLS
	o.VirtualCluster = *vc
	o.Tracing = *tracing
	o.KproxyBin = *kproxyBin
	o.KproxyBaseBin = *kproxyBase
	o.Conns = *conns
	o.Targets = bench.ParseList(*targets)
	o.Loads = bench.ParseList(*loads)
	o.WorkDir = *workDir
	o.Log = stderr

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	rep, err := bench.Run(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "kproxy-bench:", err)
		return 1
	}
	md := rep.Markdown()
	if *jsonPath != "" {
		if err := rep.WriteJSON(*jsonPath); err != nil {
			fmt.Fprintln(stderr, "kproxy-bench:", err)
			return 1
		}
	}
	if *mdPath != "" {
		if err := os.WriteFile(*mdPath, []byte(md), 0o644); err != nil {
			fmt.Fprintln(stderr, "kproxy-bench:", err)
			return 1
		}
	}
	if *pngPath != "" {
		if err := rep.WritePNG(*pngPath); err != nil {
			fmt.Fprintln(stderr, "kproxy-bench:", err)
			return 1
		}
	}
	fmt.Fprintln(stdout, md)
	fmt.Fprintf(stderr, "kproxy-bench: done in %s\n", time.Since(start).Round(time.Second))
	return 0
}
