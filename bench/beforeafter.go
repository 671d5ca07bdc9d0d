package bench

import (
	"fmt"
	"strings"
)

// beforeAfterMarkdown writes, when the run had base targets, every base
// target next to its twin on the current binary, load by load: the medians
// with the range of the rounds (min-max), so that a difference can be told
// from run-to-run noise, and the ratios before / after.
func (r *Report) beforeAfterMarkdown(b *strings.Builder) {
	type pair struct {
		lr            *LoadResult
		before, after *TargetResult
	}
	var pairs []pair
	for _, lr := range r.Loads {
		for _, base := range baseTargets() {
			before, after := lr.Result(base), lr.Result(afterOf(base))
			if before != nil && after != nil && before.Median != nil && after.Median != nil {
				pairs = append(pairs, pair{lr, before, after})
			}
		}
	}
	if len(pairs) == 0 {
		return
	}
	var throughput, latency [][]string
	for _, p := range pairs {
		if p.lr.Kind == "latency" {
			latency = append(latency, []string{p.lr.Name,
				p.after.Target, medianRange(p.after, p50, "%.0f"), medianRange(p.after, p99, "%.0f"), medianRange(p.after, cpuPerReq, "%.1f"),
				p.before.Target, medianRange(p.before, p50, "%.0f"), medianRange(p.before, p99, "%.0f"), medianRange(p.before, cpuPerReq, "%.1f"),
				rat(p.before.Ratios, "p50_vs_after"), rat(p.before.Ratios, "p99_vs_after"), rat(p.before.Ratios, "cpu_per_req_vs_after")})
			continue
		}
		throughput = append(throughput, []string{p.lr.Name,
			p.after.Target, medianRange(p.after, mbps, "%.1f"), medianRange(p.after, cpuPerGiB, "%.2f"),
			p.before.Target, medianRange(p.before, mbps, "%.1f"), medianRange(p.before, cpuPerGiB, "%.2f"),
			rat(p.before.Ratios, "mb_per_s_vs_after"), rat(p.before.Ratios, "cpu_per_gib_vs_after")})
	}
	b.WriteString("### before and after\n\nEach base target next to the same configuration on the current binary: median (min-max over the rounds).\n")
	for _, t := range []struct {
		header []string
		rows   [][]string
	}{
		{[]string{"load", "after", "after MB/s", "CPU-s/GiB", "before", "before MB/s", "CPU-s/GiB", "before / after MB/s", "CPU"}, throughput},
		{[]string{"load", "after", "p50 µs", "p99 µs", "CPU µs/req", "before", "p50 µs", "p99 µs", "CPU µs/req", "before / after p50", "p99", "CPU"}, latency},
	} {
		if len(t.rows) > 0 {
			b.WriteString("\n")
			mdTable(b, t.header, t.rows)
		}
	}
	b.WriteString("\n")
}

// A metric reads one figure of a sample; false when the sample lacks it.
type metric func(*Sample) (float64, bool)

func mbps(s *Sample) (float64, bool) { return s.MBps, s.MBps > 0 }
func p50(s *Sample) (float64, bool)  { return s.P50, s.P50 > 0 }
func p99(s *Sample) (float64, bool)  { return s.P99, s.P99 > 0 }

func cpuPerGiB(s *Sample) (float64, bool) { return deref(s.ProxyCPUPerGiB) }
func cpuPerReq(s *Sample) (float64, bool) { return deref(s.ProxyCPUPerReqUs) }

func deref(v *float64) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return *v, true
}

// roundRange is the lowest and highest of f over res's rounds; false when
// no round has it.
func roundRange(res *TargetResult, f metric) (lo, hi float64, ok bool) {
	for i := range res.Rounds {
		v, has := f(&res.Rounds[i])
		if !has {
			continue
		}
		if !ok {
			lo, hi, ok = v, v, true
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi, ok
}

// medianRange is "median (min-max)" of f in format, or "—".
func medianRange(res *TargetResult, f metric, format string) string {
	m, ok := f(res.Median)
	lo, hi, has := roundRange(res, f)
	if !ok || !has {
		return "—"
	}
	return fmt.Sprintf(format+" ("+format+"-"+format+")", m, lo, hi)
}
