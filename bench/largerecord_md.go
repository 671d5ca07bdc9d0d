package bench

import (
	"fmt"
	"strings"
)

// markdown writes the one-shot large-record table, if it ran.
func (res *LargeRecordResult) markdown(b *strings.Builder) {
	if res == nil {
		return
	}
	fmt.Fprintf(b, "### large record\n\nOne %s record produced and then consumed through kproxy, which uploads its value to SeaweedFS (parts of %s) and forwards a pointer to the upstream (%s), then downloads and resolves it; against the same bytes uploaded (multipart, same part size) and downloaded directly with the AWS SDK. Repetitions: %d, alternating which goes first; medians shown.\n\n",
		mib(res.Bytes), mib(res.PartBytes), res.Upstream, res.Repetitions)
	if res.Skipped != "" {
		fmt.Fprintf(b, "Skipped: %s\n\n", mdEscape(res.Skipped))
		return
	}
	if m := res.Median; m != nil {
		rows := [][]string{
			{"produce / PUT", secs(m.ProduceSeconds), secs(m.PutSeconds), rat(res.Ratios, "produce_vs_put"), fmt.Sprintf("%.2f", m.ProxyProduceCPUSeconds)},
			{"consume / GET", secs(m.ConsumeSeconds), secs(m.GetSeconds), rat(res.Ratios, "consume_vs_get"), fmt.Sprintf("%.2f", m.ProxyConsumeCPUSeconds)},
			{"both", secs(m.ProduceSeconds + m.ConsumeSeconds), secs(m.PutSeconds + m.GetSeconds), rat(res.Ratios, "round_trip_vs_direct"), fmt.Sprintf("%.2f", m.ProxyProduceCPUSeconds+m.ProxyConsumeCPUSeconds)},
		}
		mdTable(b, []string{"step", "through kproxy", "direct to the store", "ratio", "kproxy CPU-s"}, rows)
		fmt.Fprintf(b, "\nkproxy's peak RSS over the repetitions: %s. Load average (1 min) at the end of a repetition, median: %.1f.\n", mib(m.ProxyPeakRSS), m.LoadAvg1)
	}
	for _, e := range res.Errors {
		fmt.Fprintf(b, "\nError: %s\n", mdEscape(e))
	}
	b.WriteString("\n")
}

func secs(s float64) string { return fmt.Sprintf("%.2f s", s) }
