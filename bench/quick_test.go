package bench_test

import (
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/bench"
)

// TestQuickRun builds kproxy-bench and kproxy and runs the benchmark with
// tiny durations and every target, load and output, then checks that the
// JSON is well-formed and has every target and load. It asserts nothing
// about the numbers: this machine may be busy.
func TestQuickRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries and runs every target: skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := buildBinaries(ctx, t)
	// kproxy-encryption needs local-kms: without it that target is left
	// out here, and fails the test in CI, where the binary must be there.
	encryption := os.Getenv(bench.LocalKMSBinEnv) != ""
	args := []string{"-quick", "-rounds", "1", "-duration", "1s", "-warmup", "500ms", "-latency-n", "30",
		"-brokers", "2", "-conns", "20", "-idle", "1s", "-policy", "-vc", "-quotas", "-tls", "-tracing", "-procs", "1"}
	switch {
	case encryption:
		args = append(args, "-encryption")
	case os.Getenv("CI") != "":
		t.Fatalf("%s is not set in CI: the kproxy-encryption target cannot run", bench.LocalKMSBinEnv)
	default:
		t.Logf("%s is not set: the kproxy-encryption target is left out", bench.LocalKMSBinEnv)
	}
	pngPath := filepath.Join(dir, "out.png")
	rep, md := runBench(ctx, t, dir, append(args, "-kproxy-base", filepath.Join(dir, "kproxy"), "-png", pngPath)...)

	var measured []string
	for _, name := range bench.AllTargets {
		var info *bench.TargetInfo
		for i := range rep.Targets {
			if rep.Targets[i].Name == name {
				info = &rep.Targets[i]
			}
		}
		if info == nil && name == bench.TargetKproxyEncryption && !encryption {
			continue
		}
		if info == nil && name == bench.TargetKproxyLargeMessages { // TestQuickLargeMessages
			continue
		}
		if info == nil {
			t.Errorf("target %s missing from the report", name)
			continue
		}
		if info.Skipped {
			if info.Note == "" {
				t.Errorf("target %s skipped without a note", name)
			}
			t.Logf("target %s skipped: %s", name, info.Note)
			continue
		}
		measured = append(measured, name)
		// -idle: every proxy process reports its CPU without traffic.
		if name != bench.TargetDirect && (info.IdleMillicores == nil || *info.IdleMillicores < 0 || info.IdleSeconds < 1) {
			t.Errorf("target %s: idle CPU %v over %v s, want a figure over -idle 1s", name, info.IdleMillicores, info.IdleSeconds)
		}
	}
	for _, must := range []string{bench.TargetDirect, bench.TargetSplice, bench.TargetCopy, bench.TargetKproxy, bench.TargetKproxyBase, bench.TargetKproxyVC, bench.TargetKproxyBaseVC, bench.TargetKproxyTraced, bench.TargetTLSRelay, bench.TargetKproxyTLS, bench.TargetKproxySNI} {
		if !contains(measured, must) {
			t.Errorf("target %s was not measured", must)
		}
	}
	if encryption {
		if !contains(measured, bench.TargetKproxyEncryption) {
			t.Errorf("target %s was not measured", bench.TargetKproxyEncryption)
		}
		// Every record went through a DEK from the KMS, and the note
		// counts the calls that took.
		for _, info := range rep.Targets {
			if info.Name == bench.TargetKproxyEncryption && !strings.Contains(info.Note, "KMS calls") {
				t.Errorf("kproxy-encryption note %q does not count KMS calls", info.Note)
			}
		}
	}
	if rep.Meta.ChildGOMAXPROCS != 1 {
		t.Errorf("meta.child_gomaxprocs = %d, want 1", rep.Meta.ChildGOMAXPROCS)
	}

	if len(rep.Loads) != len(bench.AllLoads) {
		t.Fatalf("%d loads in the report, want %d", len(rep.Loads), len(bench.AllLoads))
	}
	for i, lr := range rep.Loads {
		if lr.Name != bench.AllLoads[i] {
			t.Errorf("load %d is %s, want %s", i, lr.Name, bench.AllLoads[i])
		}
		for _, e := range lr.Errors {
			t.Errorf("load %s: %s", lr.Name, e)
		}
		for _, name := range measured {
			res := lr.Result(name)
			if res == nil || res.Median == nil || len(res.Rounds) != 1 {
				t.Errorf("load %s: no result for target %s", lr.Name, name)
				continue
			}
			m := res.Median
			if lr.Kind == "latency" {
				if m.P50 <= 0 || m.P50 > m.P99 || len(res.CDF) == 0 {
					t.Errorf("load %s target %s: p50 %v p99 %v, %d CDF points", lr.Name, name, m.P50, m.P99, len(res.CDF))
				}
			} else if m.Bytes <= 0 || m.MBps <= 0 {
				t.Errorf("load %s target %s: %d bytes, %v MB/s", lr.Name, name, m.Bytes, m.MBps)
			}
			if (name == bench.TargetDirect) != (m.ProxyCPUSeconds == nil) {
				t.Errorf("load %s target %s: proxy CPU %v (only direct has none)", lr.Name, name, m.ProxyCPUSeconds)
			}
			if lr.Kind == "throughput" && (name == bench.TargetDirect) != (m.ProxyMillicores == nil) {
				t.Errorf("load %s target %s: proxy millicores %v (only direct has none)", lr.Name, name, m.ProxyMillicores)
			}
		}
		if lr.Kind == "throughput" && lr.Result(bench.TargetSplice) != nil {
			if _, ok := lr.Result(bench.TargetKproxy).Ratios["mb_per_s_vs_splice"]; !ok {
				t.Errorf("load %s: kproxy has no ratio vs splice", lr.Name)
			}
			if _, ok := lr.Result(bench.TargetKproxyBase).Ratios["mb_per_s_vs_kproxy"]; !ok {
				t.Errorf("load %s: kproxy-base has no ratio vs kproxy", lr.Name)
			}
			wantCPURatio(t, lr, bench.TargetKproxyTLS, bench.TargetTLSRelay, "cpu_per_gib_vs_tls_relay")
			wantCPURatio(t, lr, bench.TargetKproxyBaseVC, bench.TargetKproxyVC, "cpu_per_gib_vs_after")
			wantCPURatio(t, lr, bench.TargetKproxySNI, bench.TargetKproxyTLS, "cpu_per_gib_vs_kproxy_tls")
			if encryption {
				wantCPURatio(t, lr, bench.TargetKproxyEncryption, bench.TargetKproxy, "cpu_per_gib_vs_kproxy")
			}
		}
	}

	if rep.Conns == nil || len(rep.Conns.Results) == 0 {
		t.Fatal("no connection-scale result")
	}
	var connsMeasured []string
	for _, c := range rep.Conns.Results {
		if c.Error != "" || c.Opened != 20 || c.RSSAfter <= 0 {
			t.Errorf("conns %s: %+v", c.Target, c)
		}
		connsMeasured = append(connsMeasured, c.Target)
	}
	if !contains(connsMeasured, bench.TargetKproxyPolicy) {
		t.Errorf("idle pairs measured for %v, want kproxy-policy too", connsMeasured)
	}

	wantInMarkdown(t, md, "### produce", "### latency", "| kproxy |", "vs splice", "| kproxy-tls |", "kproxy-tls vs tls-relay", "| kproxy-sni |", "kproxy-sni vs kproxy-tls", "### before and after", "| produce | kproxy-vc | ", "kproxy-base-vc vs kproxy-vc", "| idle CPU |", "Idle CPU: millicores over 1 s", "| proxy mCPU |")
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("chart: %v", err)
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// wantCPURatio checks that target's result carries the CPU ratio key
// against ref's. The CPU time of a process is read in clock ticks (10 ms):
// on a machine busy with other tests, a one-second round may show a proxy
// none at all, and then no ratio can exist; that is logged, not failed.
func wantCPURatio(t *testing.T, lr *bench.LoadResult, target, ref, key string) {
	t.Helper()
	m, r := lr.Result(target), lr.Result(ref)
	if m == nil || r == nil || m.Median == nil || r.Median == nil {
		t.Errorf("load %s: no result for %s or %s", lr.Name, target, ref)
		return
	}
	if _, ok := m.Ratios[key]; ok {
		return
	}
	for _, s := range []*bench.Sample{m.Median, r.Median} {
		if s.ProxyCPUSeconds != nil && *s.ProxyCPUSeconds == 0 {
			t.Logf("load %s: %s has no %s: a proxy showed no CPU time in its round", lr.Name, target, key)
			return
		}
	}
	t.Errorf("load %s: %s has no %s although both proxies used CPU", lr.Name, target, key)
}
