// Command kproxy-bench measures kproxy against a direct connection and two
// reference relays with the same Kafka load, interleaved and repeated, and
// writes the medians as JSON, Markdown and a PNG chart. See
// docs/performance.md.
//
//	go run ./cmd/kproxy-bench -json bench.json -md bench.md -png bench.png
//	go run ./cmd/kproxy-bench -quick              # smoke test, under a minute
//	go run ./cmd/kproxy-bench -conns 10000 -loads none
//	go run ./cmd/kproxy-bench -vc -targets kproxy    # prefixed virtual cluster vs passthrough
//	go run ./cmd/kproxy-bench -encryption -localkms-bin LOCALKMS -targets kproxy -compression lz4  # record encryption vs passthrough
//	go run ./cmd/kproxy-bench -large-messages -weed-bin WEED -targets kproxy -loads produce,consume  # offload configured, not triggered, and one 100 MiB record
//	go run ./cmd/kproxy-bench -targets kproxy -kproxy-base OLD -policy -vc -quotas  # before/after, every feature
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
	o := d
	quick := fs.Bool("quick", false, "short durations for a smoke test (under a minute); explicit flags still win")
	fs.IntVar(&o.Rounds, "rounds", d.Rounds, "repetitions of every load on every target; medians are reported")
	fs.DurationVar(&o.Duration, "duration", d.Duration, "measured window of each throughput measurement")
	fs.DurationVar(&o.Warmup, "warmup", d.Warmup, "unmeasured lead-in of each measurement")
	fs.IntVar(&o.LatencyN, "latency-n", d.LatencyN, "sequential produce round trips per latency measurement")
	fs.Float64Var(&o.RateMBps, "rate", d.RateMBps, "MB/s of the fixed-rate loads (lowered to 80% of the slowest target's full speed if that is less, unless -keep-rate)")
	fs.BoolVar(&o.KeepRate, "keep-rate", false, "pace the fixed-rate loads at -rate even where a target's full speed is below it")
	fs.IntVar(&o.RecordBytes, "record-bytes", d.RecordBytes, "record value size")
	fs.IntVar(&o.Partitions, "partitions", d.Partitions, "partitions of the bench topic")
	fs.IntVar(&o.Brokers, "brokers", d.Brokers, "brokers of the embedded upstream")
	fs.StringVar(&o.Upstream, "upstream", "", "host:port of an existing cluster to use instead of the embedded synthetic one")
	fs.StringVar(&o.Topic, "topic", d.Topic, "topic to produce to and consume from")
	fs.IntVar(&o.Procs, "procs", 0, "GOMAXPROCS for every child process (relays, kproxy); 0 leaves it to the environment")
	fs.BoolVar(&o.Policy, "policy", false, "add the kproxy-policy target (kproxy with a 50-rule policy); skipped with a note if kproxy rejects the policy")
	fs.BoolVar(&o.VirtualCluster, "vc", false, "add the kproxy-vc target (kproxy serving one virtual cluster with prefix "+bench.VCPrefix+" on every name); skipped with a note if kproxy rejects virtual_clusters")
	fs.BoolVar(&o.Quotas, "quotas", false, "add the kproxy-quotas target (kproxy with quotas configured, one matching the bench traffic with limits it never reaches)")
	fs.BoolVar(&o.Encryption, "encryption", false, "add the kproxy-encryption target (kproxy encrypting the bench topic's record values, AES-256-GCM, with DEKs from local-kms that the bench starts on loopback)")
	fs.StringVar(&o.LocalKMSBin, "localkms-bin", os.Getenv(bench.LocalKMSBinEnv), "local-kms binary for -encryption (default $"+bench.LocalKMSBinEnv+")")
	fs.BoolVar(&o.LargeMessages, "large-messages", false, "add the kproxy-large-messages target (kproxy with large-message offload configured for the bench topic, to SeaweedFS that the bench starts on loopback, but not triggered) and time one large record through kproxy against the store directly")
	fs.StringVar(&o.WeedBin, "weed-bin", os.Getenv(bench.WeedBinEnv), "SeaweedFS weed binary for -large-messages (default $"+bench.WeedBinEnv+"; test/seaweedfs/build.sh builds it)")
	fs.Int64Var(&o.LargeRecordBytes, "large-record-bytes", d.LargeRecordBytes, "size of the one large record of -large-messages")
	fs.IntVar(&o.LargeRecordReps, "large-record-reps", d.LargeRecordReps, "repetitions of the large-record measurement; medians are reported")
	fs.StringVar(&o.Compression, "compression", d.Compression, "producer codec: none or lz4")
	fs.BoolVar(&o.Tracing, "tracing", false, "add the kproxy-traced target (kproxy with tracing at 1% sampling, exporting to an OTLP/HTTP sink in this process)")
	fs.BoolVar(&o.TLS, "tls", false, "add the tls-relay, kproxy-tls and kproxy-sni targets: the client speaks TLS to a TLS-terminating relay, to kproxy with TLS listeners, and to kproxy's SNI listener (one port, routed by server name)")
	fs.StringVar(&o.PolicyFile, "policy-file", "", "YAML file holding a top-level policy: block to use instead of the generated 50-rule one (implies -policy)")
	fs.StringVar(&o.KproxyBin, "kproxy-bin", "", "prebuilt kproxy binary (default: go build ./cmd/kproxy of this module)")
	fs.StringVar(&o.KproxyBaseBin, "kproxy-base", "", "add the kproxy-base target: this prebuilt kproxy binary (e.g. built from the commit before a change), passthrough, compared with kproxy in the same run; with -policy, -vc or -quotas also kproxy-base-policy, kproxy-base-vc or kproxy-base-quotas, that feature on this binary, compared with its kproxy-* target")
	fs.DurationVar(&o.Idle, "idle", 0, "hold every target without traffic this long after start-up and report its idle CPU (millicores) and RSS (e.g. 30s)")
	fs.IntVar(&o.Conns, "conns", 0, "also measure RSS per idle connection pair with this many connections (e.g. 10000)")
	targets := fs.String("targets", strings.Join(d.Targets, ","), "comma-separated targets: "+strings.Join(bench.AllTargets, ","))
	loads := fs.String("loads", strings.Join(d.Loads, ","), "comma-separated loads, or none: "+strings.Join(bench.AllLoads, ","))
	jsonPath := fs.String("json", "", "write the report as JSON to this file")
	mdPath := fs.String("md", "", "write the report as Markdown to this file")
	pngPath := fs.String("png", "", "write the chart to this PNG file")
	fs.StringVar(&o.WorkDir, "workdir", "", "keep generated configs, binaries and child logs here (default: a temp dir, removed)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "kproxy-bench: unexpected arguments:", fs.Args())
		return 2
	}
	if *quick {
		quickUnlessSet(fs, &o)
	}
	o.Policy = o.Policy || o.PolicyFile != ""
	o.Targets = bench.ParseList(*targets)
	o.Loads = bench.ParseList(*loads)
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
	for _, out := range []struct {
		path  string
		write func(string) error
	}{
		{*jsonPath, rep.WriteJSON},
		{*mdPath, func(path string) error { return os.WriteFile(path, []byte(md), 0o644) }},
		{*pngPath, rep.WritePNG},
	} {
		if out.path == "" {
			continue
		}
		if err := out.write(out.path); err != nil {
			fmt.Fprintln(stderr, "kproxy-bench:", err)
			return 1
		}
	}
	fmt.Fprintln(stdout, md)
	fmt.Fprintf(stderr, "kproxy-bench: done in %s\n", time.Since(start).Round(time.Second))
	return 0
}

// quickUnlessSet gives o the quick run's durations and repetitions, except
// those set by a flag: explicit flags win.
func quickUnlessSet(fs *flag.FlagSet, o *bench.Options) {
	q := bench.QuickDefaults()
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	o.Quick = true
	for name, field := range map[string]func(){
		"rounds":            func() { o.Rounds = q.Rounds },
		"duration":          func() { o.Duration = q.Duration },
		"warmup":            func() { o.Warmup = q.Warmup },
		"latency-n":         func() { o.LatencyN = q.LatencyN },
		"large-record-reps": func() { o.LargeRecordReps = q.LargeRecordReps },
	} {
		if !set[name] {
			field()
		}
	}
}
