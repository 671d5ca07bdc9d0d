package bench

import (
	"slices"
	"strings"
	"testing"
)

func TestWantedTargetsAddsBaseTwinsOfEnabledFeatures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Options)
		want   []string
	}{
		{"no base binary", func(o *Options) { o.Policy, o.VirtualCluster, o.Quotas = true, true, true },
			[]string{TargetKproxy, TargetKproxyPolicy, TargetKproxyVC, TargetKproxyQuotas}},
		{"base binary, no feature", func(o *Options) { o.KproxyBaseBin = "/base" },
			[]string{TargetKproxy, TargetKproxyBase}},
		{"base binary and every feature", func(o *Options) { o.KproxyBaseBin, o.Policy, o.VirtualCluster, o.Quotas = "/base", true, true, true },
			[]string{TargetKproxy, TargetKproxyBase, TargetKproxyPolicy, TargetKproxyBasePolicy, TargetKproxyVC, TargetKproxyBaseVC, TargetKproxyQuotas, TargetKproxyBaseQuotas}},
		{"base binary and one feature", func(o *Options) { o.KproxyBaseBin, o.VirtualCluster = "/base", true },
			[]string{TargetKproxy, TargetKproxyBase, TargetKproxyVC, TargetKproxyBaseVC}},
		{"a base target listed without its feature", func(o *Options) {
			o.KproxyBaseBin = "/base"
			o.Targets = append(o.Targets, TargetKproxyBaseQuotas)
		}, []string{TargetKproxy, TargetKproxyBase}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Defaults()
			o.Targets = []string{TargetKproxy}
			tc.change(&o)
			if got := wantedTargets(o); !slices.Equal(got, tc.want) {
				t.Errorf("targets %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBaseTargetsPairWithTheirFeature(t *testing.T) {
	for _, base := range baseTargets() {
		after := afterOf(base)
		if !slices.Contains(AllTargets, after) || afterOf(after) != "" {
			t.Errorf("%s is compared with %q, not a current-binary target", base, after)
		}
		if feature(base) != after || feature(after) != after {
			t.Errorf("%s runs %q, %s runs %q: want both %s", base, feature(base), after, feature(after), after)
		}
	}
	if len(baseTargets()) != 4 {
		t.Errorf("base targets %v, want passthrough, policy, vc and quotas", baseTargets())
	}
}

func TestBeforeAfterTable(t *testing.T) {
	o := Defaults()
	o.Targets = []string{TargetKproxyPolicy, TargetKproxyBasePolicy}
	r := newReport(&o)
	lr := &LoadResult{Name: LoadProduce, Kind: "throughput"}
	for name, mbps := range map[string]float64{TargetKproxyPolicy: 200, TargetKproxyBasePolicy: 100} {
		var samples []Sample
		for round := 1; round <= 3; round++ {
			samples = append(samples, Sample{Round: round, MBps: mbps * float64(round), ProxyCPUPerGiB: ptr(float64(round))})
		}
		lr.Results = append(lr.Results, summarize(name, samples))
	}
	lr.computeRatios()
	r.Loads = append(r.Loads, lr)
	r.finish()

	before := lr.Result(TargetKproxyBasePolicy)
	if got := before.Ratios["mb_per_s_vs_after"]; got != 0.5 {
		t.Errorf("before / after MB/s = %v, want 200/400", got)
	}
	if _, ok := lr.Result(TargetKproxyPolicy).Ratios["mb_per_s_vs_after"]; ok {
		t.Error("a current-binary target has a ratio vs after")
	}
	md := r.Markdown()
	want := "| produce | kproxy-policy | 400.0 (200.0-600.0) | 2.00 (1.00-3.00) | kproxy-base-policy | 200.0 (100.0-300.0) | 2.00 (1.00-3.00) | 0.50× | 1.00× |"
	if !strings.Contains(md, "### before and after") || !strings.Contains(md, want) {
		t.Errorf("markdown lacks the before/after row %q:\n%s", want, md)
	}
	if strings.Contains(md, "p50 µs | p99 µs | CPU µs/req | before") {
		t.Error("a latency before/after table without latency rows")
	}
}
