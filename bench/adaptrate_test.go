package bench

import "testing"

// The fixed rate is lowered to 80% of the slowest target's full speed,
// unless KeepRate holds it where it was asked.
func TestAdaptRate(t *testing.T) {
	report := func() *Report {
		return &Report{Loads: []*LoadResult{{Name: LoadProduce, Results: []*TargetResult{
			{Target: "kproxy", Median: &Sample{MBps: 900}},
			{Target: "kproxy-encryption", Median: &Sample{MBps: 300}},
		}}}}
	}
	r := &runner{o: Options{RateMBps: 400}, report: report()}
	if rate, _ := r.adaptRate(LoadProduceRate); rate != 240 {
		t.Errorf("adapted rate %v MB/s, want 80%% of the slowest target's 300", rate)
	}
	r = &runner{o: Options{RateMBps: 400, KeepRate: true}, report: report()}
	if rate, note := r.adaptRate(LoadProduceRate); rate != 400 {
		t.Errorf("with KeepRate: rate %v MB/s (%s), want the requested 400", rate, note)
	}
}
