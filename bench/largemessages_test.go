package bench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/bench"
	"github.com/kproxy/kproxy/internal/testkit"
)

// TestQuickLargeMessages runs -large-messages briefly: passthrough kproxy
// and kproxy-large-messages under the produce and consume loads, then the
// one-shot large record (16 MiB, so that it goes in two parts). It checks
// that the target ran with the filter configured and never triggered (no
// object in the store), that it was compared with passthrough, and that
// the large record went through kproxy and directly with every figure
// reported. It asserts nothing about the numbers: this machine may be
// busy.
func TestQuickLargeMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries and runs SeaweedFS: skipped with -short")
	}
	weed := testkit.ToolBinary(t, bench.WeedBinEnv, "build it with test/seaweedfs/build.sh and point "+bench.WeedBinEnv+" at the path it prints (.ci/run does)")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, md := runBench(ctx, t, buildBinaries(ctx, t), "-quick", "-rounds", "1", "-duration", "1s", "-warmup", "300ms",
		"-brokers", "1", "-procs", "1", "-targets", "kproxy", "-loads", "produce,consume",
		"-large-messages", "-weed-bin", weed, "-large-record-bytes", "16777216", "-large-record-reps", "1")
	var found bool
	for _, info := range rep.Targets {
		if info.Name != bench.TargetKproxyLargeMessages {
			continue
		}
		found = true
		if info.Skipped {
			t.Fatalf("%s skipped: %s", info.Name, info.Note)
		}
		if !strings.HasPrefix(info.Note, "0 objects in the store") {
			t.Errorf("%s note %q: want no object offloaded", info.Name, info.Note)
		}
	}
	if !found {
		t.Fatalf("target %s missing from the report", bench.TargetKproxyLargeMessages)
	}
	for _, lr := range rep.Loads {
		for _, e := range lr.Errors {
			t.Errorf("load %s: %s", lr.Name, e)
		}
		res := lr.Result(bench.TargetKproxyLargeMessages)
		if res == nil || res.Median == nil || res.Median.Bytes <= 0 {
			t.Errorf("load %s: no result for %s", lr.Name, bench.TargetKproxyLargeMessages)
			continue
		}
		if _, ok := res.Ratios["mb_per_s_vs_kproxy"]; !ok {
			t.Errorf("load %s: %s has no ratio vs kproxy", lr.Name, bench.TargetKproxyLargeMessages)
		}
		wantCPURatio(t, lr, bench.TargetKproxyLargeMessages, bench.TargetKproxy, "cpu_per_gib_vs_kproxy")
	}

	lrec := rep.LargeRecord
	if lrec == nil {
		t.Fatal("no large_record in the report")
	}
	if lrec.Skipped != "" || len(lrec.Errors) > 0 {
		t.Fatalf("large record: skipped %q, errors %v", lrec.Skipped, lrec.Errors)
	}
	if lrec.Bytes != 16<<20 || len(lrec.Rounds) != 1 || lrec.Median == nil {
		t.Fatalf("large record: %d bytes, %d rounds, median %v; want 16 MiB, 1 round", lrec.Bytes, len(lrec.Rounds), lrec.Median)
	}
	m := lrec.Median
	if m.ProduceSeconds <= 0 || m.ConsumeSeconds <= 0 || m.PutSeconds <= 0 || m.GetSeconds <= 0 || m.ProxyPeakRSS <= 0 {
		t.Errorf("large record median %+v: every time and the peak RSS should be positive", *m)
	}
	for _, key := range []string{"produce_vs_put", "consume_vs_get", "round_trip_vs_direct"} {
		if _, ok := lrec.Ratios[key]; !ok {
			t.Errorf("large record: no ratio %s", key)
		}
	}

	wantInMarkdown(t, md, "| kproxy-large-messages |", "Large-message offload configured, not triggered, kproxy-large-messages vs kproxy", "### large record", "| produce / PUT |", "| consume / GET |")
}
