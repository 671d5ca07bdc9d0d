package bench

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func ptr(v float64) *float64 { return &v }

// fakeReport is a report as a run would produce it, without running one.
func fakeReport() *Report {
	o := Defaults()
	o.Targets = []string{TargetDirect, TargetSplice, TargetKproxy}
	r := newReport(&o)
	for _, name := range o.Targets {
		r.Targets = append(r.Targets, TargetInfo{Name: name, Description: name})
	}
	r.Meta.ClockTicks = 100
	r.Targets[2].IdleMillicores, r.Targets[2].IdleSeconds = ptr(1.5), 20
	r.Targets = append(r.Targets, TargetInfo{Name: TargetKproxyPolicy, Skipped: true, Note: "not | enforced"})
	mk := func(load, kind string, mbps map[string]float64) *LoadResult {
		lr := &LoadResult{Name: load, Kind: kind}
		for _, t := range o.Targets {
			var samples []Sample
			for round := 1; round <= 3; round++ {
				s := Sample{Round: round, Seconds: 5, MBps: mbps[t] + float64(round), Bytes: 1 << 30}
				if t != TargetDirect {
					s.ProxyCPUSeconds = ptr(float64(round))
					s.ProxyCPUPerGiB = ptr(mbps[t] / 1000 * float64(round))
					s.ProxyMillicores = ptr(float64(round) * 200)
				}
				if kind == "latency" {
					for i := range 100 {
						s.latencies = append(s.latencies, time.Duration(50+i*int(mbps[t]))*time.Microsecond)
					}
					s.P50, s.P99 = mbps[t], 3*mbps[t]
				}
				samples = append(samples, s)
			}
			lr.Results = append(lr.Results, summarize(t, samples))
		}
		lr.computeRatios()
		return lr
	}
	speeds := map[string]float64{TargetDirect: 600, TargetSplice: 400, TargetKproxy: 300}
	r.Loads = append(r.Loads, mk(LoadProduce, "throughput", speeds), mk(LoadLatency, "latency", speeds))
	r.Conns = &ConnsResult{Requested: 10, Results: []ConnsTargetResult{{Target: TargetSplice, Opened: 10, RSSBefore: 1 << 20, RSSAfter: 2 << 20, PerPairBytes: 100 << 10}}}
	r.finish()
	return r
}

func TestSummaryAndRatios(t *testing.T) {
	r := fakeReport()
	lr := r.Loads[0]
	k := lr.Result(TargetKproxy)
	if k.Median.MBps != 302 { // median of 301, 302, 303
		t.Errorf("median MB/s = %v", k.Median.MBps)
	}
	if got := k.Ratios["mb_per_s_vs_splice"]; got < 0.75 || got > 0.76 {
		t.Errorf("kproxy vs splice = %v, want 302/402", got)
	}
	if _, ok := lr.Result(TargetDirect).Ratios["cpu_per_gib_vs_splice"]; ok {
		t.Error("direct has a CPU ratio")
	}
	lat := r.Loads[1].Result(TargetSplice)
	if len(lat.CDF) == 0 || lat.CDF[len(lat.CDF)-1].Q != 1 {
		t.Errorf("CDF: %v", lat.CDF)
	}
	if median([]float64{4, 1, 3, 2}) != 2.5 {
		t.Error("even median")
	}
	if q := quantile([]time.Duration{1, 2, 3, 4}, 0.5); q != 2 {
		t.Errorf("nearest-rank p50 of 1..4 = %v", q)
	}
}

func TestMarkdownAndPNG(t *testing.T) {
	r := fakeReport()
	md := r.Markdown()
	for _, want := range []string{"### produce", "### latency", "| kproxy | 302.0 |", `not \| enforced`, "### idle connection pairs", "100.0 KiB",
		"| kproxy | kproxy | — | 1.5 m |", "one clock tick over that window is 0.50 m", "| 0.75× | 400 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	path := filepath.Join(t.TempDir(), "c.png")
	if err := r.WritePNG(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != chartW {
		t.Errorf("chart width %d", img.Bounds().Dx())
	}
}

func TestPolicyYAML(t *testing.T) {
	y := policyYAML("t")
	if n := strings.Count(y, "- name:"); n != PolicyRules {
		t.Errorf("%d rules, want %d", n, PolicyRules)
	}
}

func TestPacer(t *testing.T) {
	p := newPacer(100) // 100 MB/s
	start := time.Now()
	for range 20 {
		p.wait(t.Context(), 1e6) // 20 MB: about 200ms
	}
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Errorf("20 MB at 100 MB/s took %v", el)
	}
}
