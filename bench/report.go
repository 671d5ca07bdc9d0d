package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kproxy/kproxy/bench/procstat"
)

// Report is everything one run measured. It is written as JSON (-json),
// Markdown (-md) and a chart (-png).
type Report struct {
	Meta    Meta          `json:"meta"`
	Targets []TargetInfo  `json:"targets"`
	Loads   []*LoadResult `json:"loads"`
	Conns   *ConnsResult  `json:"conns,omitempty"`
	// LargeRecord is the one-shot large-record measurement
	// (-large-messages).
	LargeRecord *LargeRecordResult `json:"large_record,omitempty"`
	Notes       []string           `json:"notes,omitempty"`

	coarseUsed bool // Markdown: a CPU figure of this table was marked
}

// coarseTicks is the fewest clock ticks of CPU a figure may rest on before
// the Markdown marks it: /proc counts CPU in ticks, so one tick of error is
// over 5% below it.
const coarseTicks = 20

// coarse marks a CPU figure that rests on too few clock ticks.
func (r *Report) coarse(s *Sample, text string) string {
	if s.ProxyCPUSeconds == nil || r.Meta.ClockTicks == 0 {
		return text
	}
	if *s.ProxyCPUSeconds*float64(r.Meta.ClockTicks) < coarseTicks {
		r.coarseUsed = true
		return text + "\\*"
	}
	return text
}

// Meta says how and where the run was made.
type Meta struct {
	Started   time.Time `json:"started"`
	Seconds   float64   `json:"seconds"`
	Command   []string  `json:"command"`
	GoVersion string    `json:"go_version"`
	// GitCommit is the checkout kproxy was built from ("-dirty" with
	// uncommitted changes); empty with -kproxy-bin or outside git.
	GitCommit       string `json:"git_commit,omitempty"`
	Kernel          string `json:"kernel"`
	CPUs            int    `json:"cpus"`
	BenchGOMAXPROCS int    `json:"bench_gomaxprocs"`
	// ChildGOMAXPROCS is what -procs set for the relays and kproxy; 0
	// means they inherited the environment (GOMAXPROCS=number of CPUs
	// unless set).
	ChildGOMAXPROCS int      `json:"child_gomaxprocs"`
	LoadAvgStart    string   `json:"loadavg_start"`
	LoadAvgEnd      string   `json:"loadavg_end"`
	ClockTicks      int64    `json:"clock_ticks"`
	Quick           bool     `json:"quick"`
	Rounds          int      `json:"rounds"`
	Duration        string   `json:"duration"`
	Warmup          string   `json:"warmup"`
	LatencyN        int      `json:"latency_n"`
	RecordBytes     int      `json:"record_bytes"`
	Partitions      int      `json:"partitions"`
	Upstream        string   `json:"upstream"`
	UpstreamBrokers []string `json:"upstream_brokers"`
	Topic           string   `json:"topic"`
	Targets         []string `json:"targets"`
	Loads           []string `json:"loads"`
}

// TargetInfo describes one target and what its process cost overall.
type TargetInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Skipped     bool   `json:"skipped,omitempty"`
	Note        string `json:"note,omitempty"`
	IdleRSS     int64  `json:"idle_rss_bytes,omitempty"`
	// IdleMillicores is the CPU the process used without traffic over
	// IdleSeconds after start-up (-idle), in thousandths of a core.
	IdleMillicores  *float64 `json:"idle_millicores,omitempty"`
	IdleSeconds     float64  `json:"idle_seconds,omitempty"`
	FinalRSS        int64    `json:"final_rss_bytes,omitempty"`
	TotalCPUSeconds float64  `json:"total_cpu_s,omitempty"`
}

// LoadResult is one load across every target.
type LoadResult struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"` // throughput or latency
	Description string `json:"description"`
	// RateMBps is the pace of a fixed-rate load after adaptation.
	RateMBps          float64         `json:"rate_mb_per_s,omitempty"`
	RequestedRateMBps float64         `json:"requested_rate_mb_per_s,omitempty"`
	RateNote          string          `json:"rate_note,omitempty"`
	Results           []*TargetResult `json:"results"`
	Errors            []string        `json:"errors,omitempty"`
}

// TargetResult is one load on one target: every round, and the medians.
type TargetResult struct {
	Target string   `json:"target"`
	Rounds []Sample `json:"rounds"`
	// Median holds the per-field median over rounds (peak RSS: the
	// maximum). Nil when every round failed.
	Median *Sample `json:"median"`
	// Ratios compare medians with direct, the splice relay, the TLS relay
	// and passthrough kproxy: mb_per_s_vs_direct, cpu_per_gib_vs_splice,
	// p99_vs_splice, cpu_per_gib_vs_tls_relay, mb_per_s_vs_kproxy, ...; a
	// base target also against its twin on the current binary:
	// mb_per_s_vs_after, cpu_per_gib_vs_after, p99_vs_after, ...
	Ratios map[string]float64 `json:"ratios,omitempty"`
	// CDF is the latency distribution of all rounds pooled.
	CDF []CDFPoint `json:"cdf,omitempty"`
}

// CDFPoint says a fraction Q of round trips took at most US microseconds.
type CDFPoint struct {
	US float64 `json:"us"`
	Q  float64 `json:"q"`
}

func newReport(o *Options) *Report {
	ld, _ := os.ReadFile("/proc/loadavg")
	kernel, _ := exec.Command("uname", "-r").Output()
	up := o.Upstream
	if up == "" {
		up = fmt.Sprintf("embedded kfake, %d brokers, BlackholeProduce + SyntheticFetch", o.Brokers)
	}
	return &Report{Meta: Meta{
		Started:         time.Now().UTC().Truncate(time.Second),
		Command:         os.Args,
		GoVersion:       runtime.Version(),
		Kernel:          strings.TrimSpace(string(kernel)),
		CPUs:            runtime.NumCPU(),
		BenchGOMAXPROCS: runtime.GOMAXPROCS(0),
		ChildGOMAXPROCS: o.Procs,
		LoadAvgStart:    strings.TrimSpace(string(ld)),
		ClockTicks:      procstat.ClockTicks(),
		Quick:           o.Quick,
		Rounds:          o.Rounds,
		Duration:        o.Duration.String(),
		Warmup:          o.Warmup.String(),
		LatencyN:        o.LatencyN,
		RecordBytes:     o.RecordBytes,
		Partitions:      o.Partitions,
		Upstream:        up,
		Topic:           o.Topic,
		Targets:         o.Targets,
		Loads:           o.Loads,
	}}
}

// gitCommit describes the working tree's commit, or "".
func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += "-dirty"
	}
	return c
}

func (r *Report) finish() {
	ld, _ := os.ReadFile("/proc/loadavg")
	r.Meta.LoadAvgEnd = strings.TrimSpace(string(ld))
	r.Meta.Seconds = time.Since(r.Meta.Started).Round(time.Second).Seconds()
	if r.Targets == nil {
		r.Targets = []TargetInfo{}
	}
	if r.Loads == nil {
		r.Loads = []*LoadResult{}
	}
}

// Result is the named target's result, or nil.
func (lr *LoadResult) Result(target string) *TargetResult {
	for _, r := range lr.Results {
		if r.Target == target {
			return r
		}
	}
	return nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medianOf is the median of f over samples where it is set, or nil.
func medianOf(samples []Sample, f func(*Sample) *float64) *float64 {
	var xs []float64
	for i := range samples {
		if v := f(&samples[i]); v != nil {
			xs = append(xs, *v)
		}
	}
	if len(xs) == 0 {
		return nil
	}
	m := median(xs)
	return &m
}

func summarize(target string, samples []Sample) *TargetResult {
	tr := &TargetResult{Target: target, Rounds: samples}
	if tr.Rounds == nil {
		tr.Rounds = []Sample{}
	}
	if len(samples) == 0 {
		return tr
	}
	val := func(f func(*Sample) float64) float64 {
		xs := make([]float64, len(samples))
		for i := range samples {
			xs[i] = f(&samples[i])
		}
		return median(xs)
	}
	m := &Sample{
		Seconds:          val(func(s *Sample) float64 { return s.Seconds }),
		MBps:             val(func(s *Sample) float64 { return s.MBps }),
		RecPerS:          val(func(s *Sample) float64 { return s.RecPerS }),
		BenchCPUPerGiB:   val(func(s *Sample) float64 { return s.BenchCPUPerGiB }),
		P50:              val(func(s *Sample) float64 { return s.P50 }),
		P90:              val(func(s *Sample) float64 { return s.P90 }),
		P99:              val(func(s *Sample) float64 { return s.P99 }),
		P999:             val(func(s *Sample) float64 { return s.P999 }),
		LoadAvg1:         val(func(s *Sample) float64 { return s.LoadAvg1 }),
		ProxyCPUSeconds:  medianOf(samples, func(s *Sample) *float64 { return s.ProxyCPUSeconds }),
		ProxyCPUPerGiB:   medianOf(samples, func(s *Sample) *float64 { return s.ProxyCPUPerGiB }),
		ProxyMillicores:  medianOf(samples, func(s *Sample) *float64 { return s.ProxyMillicores }),
		ProxyCPUPerReqUs: medianOf(samples, func(s *Sample) *float64 { return s.ProxyCPUPerReqUs }),
	}
	m.Bytes = int64(val(func(s *Sample) float64 { return float64(s.Bytes) }))
	m.Records = int64(val(func(s *Sample) float64 { return float64(s.Records) }))
	for _, s := range samples {
		m.ProxyPeakRSS = max(m.ProxyPeakRSS, s.ProxyPeakRSS)
		m.Errors += s.Errors
	}
	tr.Median = m

	var pooled []time.Duration
	for _, s := range samples {
		pooled = append(pooled, s.latencies...)
	}
	if len(pooled) > 0 {
		slices.Sort(pooled)
		tr.CDF = cdf(pooled)
	}
	return tr
}

// cdf samples the distribution at 200 evenly spaced quantiles plus the
// tail quantiles a chart's right edge needs.
func cdf(sorted []time.Duration) []CDFPoint {
	var qs []float64
	for i := 1; i <= 200; i++ {
		qs = append(qs, float64(i)/200)
	}
	qs = append(qs, 0.0005, 0.001, 0.0025, 0.9975, 0.999, 0.9995)
	slices.Sort(qs)
	qs = slices.Compact(qs)
	out := make([]CDFPoint, 0, len(qs))
	for _, q := range qs {
		out = append(out, CDFPoint{US: us(quantile(sorted, q)), Q: q})
	}
	return out
}

func (lr *LoadResult) computeRatios() {
	type reference struct {
		key    string
		target string
	}
	refs := []reference{{"direct", TargetDirect}, {"splice", TargetSplice}, {"tls_relay", TargetTLSRelay}, {"kproxy_tls", TargetKproxyTLS}, {"kproxy", TargetKproxy}}
	for _, res := range lr.Results {
		if res.Median == nil {
			continue
		}
		rs := map[string]float64{}
		// A base target is also compared with its twin on the current
		// binary, as "after".
		for _, ref := range append(refs, reference{"after", afterOf(res.Target)}) {
			if other := lr.Result(ref.target); other != nil && other.Median != nil {
				addRatios(rs, lr.Kind, ref.key, res.Median, other.Median)
			}
		}
		if len(rs) > 0 {
			res.Ratios = rs
		}
	}
}

// addRatios records m over ref as rs[METRIC_vs_KEY]: throughput or latency
// percentiles by kind, and proxy CPU where both have it (direct has none).
func addRatios(rs map[string]float64, kind, key string, m, ref *Sample) {
	ratio := func(metric string, a, b float64) {
		if b > 0 && a > 0 {
			rs[metric+"_vs_"+key] = a / b
		}
	}
	if kind == "latency" {
		ratio("p50", m.P50, ref.P50)
		ratio("p99", m.P99, ref.P99)
		ratio("p999", m.P999, ref.P999)
	} else {
		ratio("mb_per_s", m.MBps, ref.MBps)
	}
	if m.ProxyCPUPerGiB != nil && ref.ProxyCPUPerGiB != nil {
		ratio("cpu_per_gib", *m.ProxyCPUPerGiB, *ref.ProxyCPUPerGiB)
	}
	if m.ProxyCPUPerReqUs != nil && ref.ProxyCPUPerReqUs != nil {
		ratio("cpu_per_req", *m.ProxyCPUPerReqUs, *ref.ProxyCPUPerReqUs)
	}
}

// WriteJSON writes the report, indented.
func (r *Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Markdown renders the report as tables.
func (r *Report) Markdown() string {
	var b strings.Builder
	m := r.Meta
	fmt.Fprintf(&b, "## kproxy-bench results\n\n")
	fmt.Fprintf(&b, "%s, %s, kernel %s, %d CPUs; bench process GOMAXPROCS=%d, child GOMAXPROCS=%s. ",
		m.Started.Format("2006-01-02 15:04 UTC"), m.GoVersion, m.Kernel, m.CPUs, m.BenchGOMAXPROCS, childProcs(m.ChildGOMAXPROCS))
	if m.GitCommit != "" {
		fmt.Fprintf(&b, "kproxy built from %s. ", m.GitCommit)
	}
	fmt.Fprintf(&b, "Upstream: %s. %d rounds of %s (after %s warm-up) per load and target, interleaved; medians shown. ",
		m.Upstream, m.Rounds, m.Duration, m.Warmup)
	fmt.Fprintf(&b, "Load average at start %s, at end %s. Run took %.0f s.\n\n", firstN(m.LoadAvgStart, 3), firstN(m.LoadAvgEnd, 3), m.Seconds)

	b.WriteString("| target | what it is | idle RSS | idle CPU | RSS at end | CPU-s over the run |\n| --- | --- | ---: | ---: | ---: | ---: |\n")
	for _, t := range r.Targets {
		if t.Skipped {
			fmt.Fprintf(&b, "| %s | %s | skipped: %s | | | |\n", t.Name, t.Description, mdEscape(t.Note))
			continue
		}
		desc := t.Description
		if t.Note != "" {
			desc += " (" + t.Note + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", t.Name, mdEscape(desc), mib(t.IdleRSS), idleCPU(t), mib(t.FinalRSS), cpuTotal(t))
	}
	b.WriteString("\n")
	r.idleNote(&b)

	for _, lr := range r.Loads {
		fmt.Fprintf(&b, "### %s\n\n%s.", lr.Name, lr.Description)
		if lr.RateMBps > 0 {
			fmt.Fprintf(&b, " Pace: %.0f MB/s (%s).", lr.RateMBps, lr.RateNote)
		}
		b.WriteString("\n\n")
		header, row := []string{"target", "MB/s", "spread", "records/s", "vs direct", "vs splice", "proxy CPU-s/GiB", "CPU/GiB vs splice", "proxy mCPU", "proxy peak RSS", "bench CPU-s/GiB"}, r.throughputRow
		if lr.Kind == "latency" {
			header, row = []string{"target", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "p50 vs direct", "p50 vs splice", "p99 vs direct", "p99 vs splice", "proxy CPU µs/req", "CPU/req vs splice"}, r.latencyRow
		}
		var rows [][]string
		for _, res := range lr.Results {
			if res.Median == nil {
				rows = append(rows, []string{res.Target, "failed"})
				continue
			}
			rows = append(rows, row(res))
		}
		mdTable(&b, header, rows)
		compareLine(&b, lr, "TLS on the client side", TargetKproxyTLS, TargetTLSRelay, "tls_relay")
		compareLine(&b, lr, "SNI listener", TargetKproxySNI, TargetKproxyTLS, "kproxy_tls")
		compareLine(&b, lr, "Prefixed virtual cluster", TargetKproxyVC, TargetKproxy, "kproxy")
		compareLine(&b, lr, "Record encryption", TargetKproxyEncryption, TargetKproxy, "kproxy")
		compareLine(&b, lr, "Large-message offload configured, not triggered", TargetKproxyLargeMessages, TargetKproxy, "kproxy")
		for _, base := range baseTargets() {
			compareLine(&b, lr, "Base binary (before)", base, afterOf(base), "after")
		}
		if r.coarseUsed {
			fmt.Fprintf(&b, "\n\\* fewer than %d clock ticks (1/%d s) of proxy CPU in the median window: too coarse to compare; use longer runs.\n", coarseTicks, r.Meta.ClockTicks)
			r.coarseUsed = false
		}
		for _, e := range lr.Errors {
			fmt.Fprintf(&b, "\nError: %s\n", mdEscape(e))
		}
		b.WriteString("\n")
	}

	r.beforeAfterMarkdown(&b)

	r.LargeRecord.markdown(&b)

	if c := r.Conns; c != nil {
		fmt.Fprintf(&b, "### idle connection pairs\n\n%d client connections opened through each proxy, each sending one ApiVersions request so that it has its upstream connection, then held idle. RSS per pair = (VmRSS after − VmRSS before) / connections.\n\n", c.Requested)
		b.WriteString("| target | connections | RSS before | RSS after | RSS per pair | vs splice |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
		var splice float64
		for _, t := range c.Results {
			if t.Target == TargetSplice {
				splice = t.PerPairBytes
			}
		}
		for _, t := range c.Results {
			if t.Error != "" {
				fmt.Fprintf(&b, "| %s | failed: %s | | | | |\n", t.Target, mdEscape(t.Error))
				continue
			}
			vs := "—"
			if splice > 0 {
				vs = fmt.Sprintf("%.2f×", t.PerPairBytes/splice)
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %.1f KiB | %s |\n", t.Target, t.Opened, mib(t.RSSBefore), mib(t.RSSAfter), t.PerPairBytes/1024, vs)
		}
		b.WriteString("\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("Notes:\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		b.WriteString("\n")
	}
	b.WriteString("MB = 10^6 bytes of record values; GiB = 2^30 bytes. CPU is utime+stime of the proxy process from /proc/PID/stat over the measured window; direct has no proxy (—). Spread: half the range of the rounds' MB/s over the median. Ratios: the target's median over the reference's median (for throughput higher is better, for latency and CPU lower is better). Bench CPU is the benchmark process itself (client and embedded upstream), the same work for every target.\n")
	return b.String()
}

// throughputRow and latencyRow are a target's row of its load's table.
func (r *Report) throughputRow(res *TargetResult) []string {
	s := res.Median
	return []string{res.Target, fmt.Sprintf("%.1f", s.MBps), spread(res), fmt.Sprintf("%.0f", s.RecPerS),
		rat(res.Ratios, "mb_per_s_vs_direct"), rat(res.Ratios, "mb_per_s_vs_splice"),
		r.coarse(s, optf(s.ProxyCPUPerGiB, "%.2f")), rat(res.Ratios, "cpu_per_gib_vs_splice"),
		r.coarse(s, optf(s.ProxyMillicores, "%.0f")), mib(s.ProxyPeakRSS), fmt.Sprintf("%.2f", s.BenchCPUPerGiB)}
}

func (r *Report) latencyRow(res *TargetResult) []string {
	s := res.Median
	return []string{res.Target, fmt.Sprintf("%.0f", s.P50), fmt.Sprintf("%.0f", s.P90), fmt.Sprintf("%.0f", s.P99), fmt.Sprintf("%.0f", s.P999),
		rat(res.Ratios, "p50_vs_direct"), rat(res.Ratios, "p50_vs_splice"),
		rat(res.Ratios, "p99_vs_direct"), rat(res.Ratios, "p99_vs_splice"),
		r.coarse(s, optf(s.ProxyCPUPerReqUs, "%.1f")), rat(res.Ratios, "cpu_per_req_vs_splice")}
}

// mdTable writes a Markdown table, the first column left aligned and the
// others right; a short row (a failed target) is padded with empty cells.
func mdTable(b *strings.Builder, header []string, rows [][]string) {
	fmt.Fprintf(b, "| %s |\n| --- |%s\n", strings.Join(header, " | "), strings.Repeat(" ---: |", len(header)-1))
	for _, row := range rows {
		row = append(row, make([]string, max(len(header)-len(row), 0))...)
		fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
	}
}

// spread is the range of a target's per-round MB/s relative to its median:
// how much the rounds disagreed.
func spread(res *TargetResult) string {
	if len(res.Rounds) < 2 || res.Median == nil || res.Median.MBps <= 0 {
		return "—"
	}
	lo, hi, _ := roundRange(res, mbps)
	return fmt.Sprintf("±%.0f%%", 50*(hi-lo)/res.Median.MBps)
}

func childProcs(n int) string {
	if n <= 0 {
		return "inherited"
	}
	return fmt.Sprint(n)
}

func firstN(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

func cpuTotal(t TargetInfo) string {
	if t.TotalCPUSeconds == 0 && t.IdleRSS == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", t.TotalCPUSeconds)
}

func mib(n int64) string {
	if n <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func rat(m map[string]float64, key string) string {
	v, ok := m[key]
	if !ok {
		return "—"
	}
	return fmt.Sprintf("%.2f×", v)
}

func optf(v *float64, format string) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf(format, *v)
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// compareLine writes the Markdown line "label, target vs ref: ..." of lr,
// from target's ratios against ref (refKey is ref in the ratio keys), if
// both were measured.
func compareLine(b *strings.Builder, lr *LoadResult, label, target, ref, refKey string) {
	res := lr.Result(target)
	if res == nil || res.Median == nil || lr.Result(ref) == nil {
		return
	}
	r := func(metric string) string { return rat(res.Ratios, metric+"_vs_"+refKey) }
	if lr.Kind == "latency" {
		fmt.Fprintf(b, "\n%s, %s vs %s: p50 %s, p99 %s, CPU per request %s.\n", label, target, ref, r("p50"), r("p99"), r("cpu_per_req"))
	} else {
		fmt.Fprintf(b, "\n%s, %s vs %s: throughput %s, CPU per GiB %s.\n", label, target, ref, r("mb_per_s"), r("cpu_per_gib"))
	}
}
