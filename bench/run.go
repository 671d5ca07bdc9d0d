package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kproxy/kproxy/bench/procstat"
)

// runner holds one run's state.
type runner struct {
	o       Options
	log     io.Writer
	up      *upstream
	workDir string
	kproxy  string // binary
	policy  string // policy block, when the policy target is wanted
	pki     *benchPKI
	// traceSink receives the kproxy-traced target's spans.
	traceSink *traceSink
	// kms is local-kms, for the kproxy-encryption target; kmsEndpoint
	// its URL.
	kms         *target
	kmsEndpoint string
	// sealedUp is kproxy-encryption's upstream when the bench embeds
	// one: it serves encrypted records (startSealedUpstream).
	sealedUp *upstream
	// store is SeaweedFS, for the large-message targets.
	store   *store
	targets []*target
	report  *Report
}

// Run runs the benchmark o describes and returns its report. ctx cancels
// it; every child process is stopped before Run returns.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	r := &runner{o: o, log: o.Log}
	if r.log == nil {
		r.log = io.Discard
	}
	r.o.Targets = wantedTargets(o)
	r.report = newReport(&r.o)

	if o.Conns > 0 {
		note, err := raiseFileLimit(o.Conns)
		if err != nil {
			return nil, err
		}
		if note != "" {
			r.report.Notes = append(r.report.Notes, note)
		}
	}

	r.workDir = o.WorkDir
	if r.workDir == "" {
		dir, err := os.MkdirTemp("", "kproxy-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		r.workDir = dir
	} else if err := os.MkdirAll(r.workDir, 0o755); err != nil {
		return nil, err
	}

	up, err := startUpstream(ctx, &r.o)
	if err != nil {
		return nil, err
	}
	defer up.close()
	r.up = up
	r.report.Meta.UpstreamBrokers = up.brokers

	if r.needsKproxy() {
		r.kproxy = o.KproxyBin
		if r.kproxy == "" {
			r.report.Meta.GitCommit = gitCommit()
			if r.kproxy, err = buildKproxy(ctx, r.workDir, r.log); err != nil {
				return nil, err
			}
		}
	}
	if slices.Contains(r.o.Targets, TargetKproxyPolicy) || slices.Contains(r.o.Targets, TargetKproxyBasePolicy) {
		if r.policy, err = policyBlock(&r.o); err != nil {
			return nil, err
		}
	}
	if slices.Contains(r.o.Targets, TargetKproxyEncryption) {
		if r.kms, r.kmsEndpoint, err = startLocalKMS(ctx, &r.o, r.workDir); err != nil {
			return nil, err
		}
		defer r.kms.stop()
		if up.synthetic {
			if r.sealedUp, err = startSealedUpstream(ctx, &r.o, r.kmsEndpoint); err != nil {
				return nil, err
			}
			defer r.sealedUp.close()
		}
	}
	if o.LargeMessages {
		if r.store, err = startSeaweed(ctx, &r.o, r.workDir); err != nil {
			return nil, err
		}
		defer r.store.stop()
	}
	if o.TLS {
		if r.pki, err = newBenchPKI(r.workDir); err != nil {
			return nil, err
		}
	}

	if len(r.o.Loads) > 0 {
		if err := r.startTargets(ctx); err != nil {
			r.stopTargets()
			return nil, err
		}
		err := r.runLoads(ctx)
		r.finishTargets()
		r.stopTargets()
		if err != nil {
			return nil, err
		}
	}
	if o.LargeMessages {
		r.report.LargeRecord = r.runLargeRecord(ctx)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if o.Conns > 0 {
		if err := r.runConns(ctx); err != nil {
			return nil, err
		}
	}
	r.report.finish()
	return r.report, nil
}

func wantedTargets(o Options) []string {
	out := slices.Clone(o.Targets)
	base := o.KproxyBaseBin != ""
	// Each optional target is in the run exactly when its flags are set;
	// a feature's base target needs the feature and the base binary.
	for target, on := range map[string]bool{TargetKproxyPolicy: o.Policy, TargetKproxyVC: o.VirtualCluster,
		TargetKproxyQuotas: o.Quotas, TargetKproxyEncryption: o.Encryption, TargetKproxyLargeMessages: o.LargeMessages, TargetKproxyTraced: o.Tracing, TargetKproxyBase: base,
		TargetKproxyBasePolicy: base && o.Policy, TargetKproxyBaseVC: base && o.VirtualCluster, TargetKproxyBaseQuotas: base && o.Quotas} {
		out = slices.DeleteFunc(out, func(s string) bool { return s == target })
		if on {
			out = append(out, target)
		}
	}
	if !o.TLS {
		out = slices.DeleteFunc(out, func(s string) bool { return slices.Contains(tlsTargets, s) })
	} else {
		out = append(out, tlsTargets...)
	}
	// Report order, whatever the flag's order.
	slices.SortFunc(out, func(a, b string) int { return slices.Index(AllTargets, a) - slices.Index(AllTargets, b) })
	return slices.Compact(out)
}

func (r *runner) needsKproxy() bool {
	return slices.ContainsFunc(r.o.Targets, func(t string) bool {
		return t == TargetKproxy || t == TargetKproxyPolicy || t == TargetKproxyVC || t == TargetKproxyQuotas || t == TargetKproxyEncryption || t == TargetKproxyLargeMessages || t == TargetKproxyTraced || t == TargetKproxyTLS || t == TargetKproxySNI
	}) || r.o.Conns > 0 || r.o.LargeMessages
}

// startTarget starts the named target's process (if it has one).
func (r *runner) startTarget(ctx context.Context, name string) (*target, error) {
	switch name {
	case TargetDirect:
		return direct(r.up), nil
	case TargetSplice, TargetCopy, TargetTLSRelay:
		return startRelay(&r.o, r.up, name, r.pki, r.workDir)
	case TargetKproxy, TargetKproxyBase, TargetKproxyPolicy, TargetKproxyBasePolicy,
		TargetKproxyVC, TargetKproxyBaseVC, TargetKproxyQuotas, TargetKproxyBaseQuotas:
		return r.startKproxyFeature(ctx, name)
	case TargetKproxyEncryption:
		up := r.up
		if r.sealedUp != nil {
			up = r.sealedUp
		}
		return startKproxy(ctx, &r.o, up, name, r.kproxy, encryptionYAML(r.kmsEndpoint, r.o.Topic), nil, r.workDir)
	case TargetKproxyLargeMessages:
		return startKproxy(ctx, &r.o, r.up, name, r.kproxy, largeMessagesYAML(r.store.endpoint, r.o.Topic, largeThreshold(&r.o)), nil, r.workDir)
	case TargetKproxyTraced:
		return r.startKproxyTraced(ctx)
	case TargetKproxyTLS, TargetKproxySNI:
		return startKproxy(ctx, &r.o, r.up, name, r.kproxy, "", r.pki, r.workDir)
	}
	return nil, fmt.Errorf("unknown target %q", name)
}

// startKproxyFeature starts a plaintext kproxy target: passthrough,
// policy, virtual cluster or quotas, on the current binary or, for a base
// target, on the base binary.
func (r *runner) startKproxyFeature(ctx context.Context, name string) (*target, error) {
	bin := r.kproxy
	if afterOf(name) != "" {
		bin = r.o.KproxyBaseBin
	}
	var policy string
	switch feature(name) {
	case TargetKproxyPolicy:
		policy = r.policy
	case TargetKproxyQuotas:
		policy = quotasYAML()
	}
	t, err := startKproxy(ctx, &r.o, r.up, name, bin, policy, nil, r.workDir)
	if t != nil && afterOf(name) != "" {
		t.desc += ", of the base binary " + bin
	}
	return t, err
}

func (r *runner) startTargets(ctx context.Context) error {
	for _, name := range r.o.Targets {
		t, err := r.startTarget(ctx, name)
		if err != nil {
			return err
		}
		r.targets = append(r.targets, t)
		if t.skipped != "" {
			fmt.Fprintf(r.log, "target %s skipped: %s\n", name, t.skipped)
		} else {
			fmt.Fprintf(r.log, "target %s ready (pid %d)\n", name, t.pid())
		}
	}
	// Let start-up settle before recording idle memory.
	time.Sleep(200 * time.Millisecond)
	if err := r.holdIdle(ctx); err != nil {
		return err
	}
	for _, t := range r.targets {
		t.recordIdle()
	}
	return nil
}

// finishTargets records what the targets cost over the whole run.
func (r *runner) finishTargets() {
	for _, t := range r.targets {
		info := TargetInfo{Name: t.name, Description: t.desc, IdleRSS: t.idleRSS, IdleMillicores: t.idleMillicores, IdleSeconds: t.idleSeconds}
		if t.skipped != "" {
			info.Skipped = true
			info.Note = t.skipped
		} else if t.note != "" {
			info.Note = t.note
		}
		if t.name == TargetKproxyEncryption && !info.Skipped {
			info.Note = encryptionNote(context.Background(), t)
		}
		if t.name == TargetKproxyLargeMessages && !info.Skipped {
			info.Note = largeMessagesNote(context.Background(), r.store, largeThreshold(&r.o))
		}
		if pid := t.pid(); pid != 0 {
			if m, err := procstat.Mem(pid); err == nil {
				info.FinalRSS = m.RSS
			}
			if c, err := procstat.CPU(pid); err == nil {
				info.TotalCPUSeconds = c.Seconds()
			}
		}
		r.report.Targets = append(r.report.Targets, info)
	}
}

func (r *runner) stopTargets() {
	for _, t := range r.targets {
		t.stop()
	}
	r.targets = nil
	if r.traceSink != nil {
		fmt.Fprintf(r.log, "trace sink: %d OTLP export requests received\n", r.traceSink.requests.Load())
		r.traceSink.close()
		r.traceSink = nil
	}
}

func (r *runner) active() []*target {
	var out []*target
	for _, t := range r.targets {
		if t.skipped == "" {
			out = append(out, t)
		}
	}
	return out
}

// runLoads runs every load, round by round, each round visiting every
// target once, starting one target later each round.
func (r *runner) runLoads(ctx context.Context) error {
	active := r.active()
	for _, load := range r.o.Loads {
		lr := &LoadResult{Name: load, Description: loadDescription(load, &r.o)}
		rate := 0.0
		switch load {
		case LoadProduceRate, LoadConsumeRate:
			rate, lr.RateNote = r.adaptRate(load)
			lr.RequestedRateMBps = r.o.RateMBps
			lr.RateMBps = rate
		}
		if load == LoadLatency {
			lr.Kind = "latency"
		} else {
			lr.Kind = "throughput"
		}
		samples := map[string][]Sample{}
		for round := range r.o.Rounds {
			if load == LoadLatency {
				r.latencyRound(ctx, lr, rotate(active, round), round, samples)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				continue
			}
			for i := range active {
				t := active[(i+round)%len(active)]
				runtime.GC()
				time.Sleep(100 * time.Millisecond)
				s, err := r.measure(ctx, load, t, rate)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				s.Round = round + 1
				s.LoadAvg1 = loadAvg1()
				if err != nil {
					fmt.Fprintf(r.log, "%-13s round %d %-14s ERROR %v\n", load, round+1, t.name, err)
					lr.Errors = append(lr.Errors, fmt.Sprintf("round %d %s: %v", round+1, t.name, err))
					continue
				}
				fmt.Fprintf(r.log, "%-13s round %d %-14s %s\n", load, round+1, t.name, s.brief())
				samples[t.name] = append(samples[t.name], s)
			}
		}
		for _, t := range active {
			lr.Results = append(lr.Results, summarize(t.name, samples[t.name]))
		}
		lr.computeRatios()
		r.report.Loads = append(r.report.Loads, lr)
	}
	return nil
}

func (r *runner) measure(ctx context.Context, load string, t *target, rate float64) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.Warmup+r.o.Duration+2*time.Minute)
	defer cancel()
	if load == LoadConsume || load == LoadConsumeRate {
		return runConsume(ctx, t, &r.o, rate)
	}
	return runProduce(ctx, t, &r.o, rate)
}

// latencyRound runs one round of the latency load on every target at
// once, the targets taking turns (see runLatencyRound), and records each
// target's sample or error.
func (r *runner) latencyRound(ctx context.Context, lr *LoadResult, targets []*target, round int, samples map[string][]Sample) {
	runtime.GC()
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	got, errs := runLatencyRound(ctx, targets, &r.o)
	for i, t := range targets {
		if errs[i] != nil {
			fmt.Fprintf(r.log, "%-13s round %d %-14s ERROR %v\n", LoadLatency, round+1, t.name, errs[i])
			lr.Errors = append(lr.Errors, fmt.Sprintf("round %d %s: %v", round+1, t.name, errs[i]))
			continue
		}
		s := got[i]
		s.Round, s.LoadAvg1 = round+1, loadAvg1()
		fmt.Fprintf(r.log, "%-13s round %d %-14s %s\n", LoadLatency, round+1, t.name, s.brief())
		samples[t.name] = append(samples[t.name], s)
	}
}

// rotate is targets starting at index round (mod len): each round starts
// one target later.
func rotate(targets []*target, round int) []*target {
	k := round % max(len(targets), 1)
	return append(slices.Clone(targets[k:]), targets[:k]...)
}

// adaptRate is the fixed rate for load: the requested rate, lowered to 80%
// of the slowest target's median full-speed throughput for the same
// direction when that is lower, so that every target can carry it and CPU
// per GiB is compared at equal load.
func (r *runner) adaptRate(load string) (float64, string) {
	full := LoadProduce
	if load == LoadConsumeRate {
		full = LoadConsume
	}
	rate := r.o.RateMBps
	if r.o.KeepRate {
		return rate, fmt.Sprintf("requested %.0f MB/s; kept (-keep-rate): a target below it could not carry it", rate)
	}
	for _, lr := range r.report.Loads {
		if lr.Name != full {
			continue
		}
		slowest, who := 0.0, ""
		for _, res := range lr.Results {
			if res.Median == nil {
				continue
			}
			if who == "" || res.Median.MBps < slowest {
				slowest, who = res.Median.MBps, res.Target
			}
		}
		if who != "" && 0.8*slowest < rate {
			return 0.8 * slowest, fmt.Sprintf("requested %.0f MB/s; lowered to 80%% of the slowest target's full-speed median (%s, %.0f MB/s)", rate, who, slowest)
		}
		return rate, fmt.Sprintf("requested %.0f MB/s; every target's full-speed median is above it", rate)
	}
	return rate, fmt.Sprintf("requested %.0f MB/s; not adapted (the full-speed load did not run)", rate)
}

func loadDescription(load string, o *Options) string {
	switch load {
	case LoadProduce:
		return fmt.Sprintf("produce %d B records to %d partitions, idempotent, acks=all, no compression, as fast as one client can", o.RecordBytes, o.Partitions)
	case LoadConsume:
		return fmt.Sprintf("consume %d B records from %d partitions (direct consumer, no group), as fast as one client can", o.RecordBytes, o.Partitions)
	case LoadProduceRate:
		return "the produce load paced at a fixed rate"
	case LoadConsumeRate:
		return "the consume load paced at a fixed rate"
	case LoadLatency:
		return fmt.Sprintf("%d sequential ProduceSync calls of one %d B record (acks=all, linger 0): round-trip latency", o.LatencyN, latencyValueBytes)
	}
	return ""
}

func (s Sample) brief() string {
	if s.P50 > 0 {
		return fmt.Sprintf("p50 %.0fus p99 %.0fus p999 %.0fus%s", s.P50, s.P99, s.P999, cpuBrief(s))
	}
	return fmt.Sprintf("%8.1f MB/s %9.0f rec/s%s", s.MBps, s.RecPerS, cpuBrief(s))
}

func cpuBrief(s Sample) string {
	var b strings.Builder
	if s.ProxyCPUPerGiB != nil {
		fmt.Fprintf(&b, "  proxy %.2f CPU-s/GiB", *s.ProxyCPUPerGiB)
	}
	if s.ProxyCPUPerReqUs != nil {
		fmt.Fprintf(&b, "  proxy %.1f CPU-us/req", *s.ProxyCPUPerReqUs)
	}
	if s.ProxyPeakRSS > 0 {
		fmt.Fprintf(&b, "  peak %.1f MiB", float64(s.ProxyPeakRSS)/(1<<20))
	}
	if s.Errors > 0 {
		fmt.Fprintf(&b, "  %d errors", s.Errors)
	}
	return b.String()
}

// loadAvg1 is the 1-minute load average from /proc/loadavg, or -1.
func loadAvg1() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	var v float64
	if _, err := fmt.Sscan(string(data), &v); err != nil {
		return -1
	}
	return v
}
