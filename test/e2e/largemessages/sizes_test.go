package e2elargemessages

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestInterleavedSizesByteIdentical: an idempotent producer writes small,
// 5 MiB and 50 MiB records interleaved on one topic through kproxy; a
// consumer through kproxy reads them byte for byte (SHA-256) in order,
// with their headers; a consumer of the cluster itself sees small records
// as written and, for each large one, a pointer of a few hundred bytes
// naming an object of the value's size under the cluster's and topic's
// prefix.
func TestInterleavedSizesByteIdentical(t *testing.T) {
	e := newEnv(t, []string{"media.images"}, section(`    - {match: "media.*", threshold_bytes: 1048576}`, ""))
	ctx := e.ctx()
	sizes := []int{100, 5 << 20, 1000, 50 << 20, 10, 5 << 20}
	var sent []*kgo.Record
	for i, n := range sizes {
		sent = append(sent, &kgo.Record{Topic: "media.images", Key: []byte(fmt.Sprintf("k%d", i)), Value: value(uint64(i), n),
			Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte(fmt.Sprintf("00-%032d-%016d-01", i, i))}}})
	}
	p := e.proxied() // idempotent: franz-go's default
	for _, r := range sent {
		start := time.Now()
		if err := p.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %d bytes: %v", len(r.Value), err)
		}
		t.Logf("produced %d bytes through kproxy in %v", len(r.Value), time.Since(start).Round(time.Millisecond))
	}
	start := time.Now()
	got := testkit.Consume(t, ctx, e.proxied(kgo.ConsumeTopics("media.images")), len(sent))
	t.Logf("consumed the %d records through kproxy in %v", len(sent), time.Since(start).Round(time.Millisecond))
	for i, r := range got {
		if digest(r.Value) != digest(sent[i].Value) || string(r.Key) != string(sent[i].Key) {
			t.Errorf("record %d: %d bytes, key %q; want the %d bytes sent under key %q", i, len(r.Value), r.Key, len(sent[i].Value), sent[i].Key)
		}
		if len(r.Headers) != 1 || r.Headers[0].Key != "traceparent" || string(r.Headers[0].Value) != string(sent[i].Headers[0].Value) {
			t.Errorf("record %d: headers %v, want the traceparent sent", i, r.Headers)
		}
	}
	raw := testkit.Consume(t, ctx, e.direct(kgo.ConsumeTopics("media.images")), len(sent))
	for i, r := range raw {
		if sizes[i] <= 1<<20 {
			if digest(r.Value) != digest(sent[i].Value) {
				t.Errorf("record %d of %d bytes was changed in the cluster", i, sizes[i])
			}
			continue
		}
		ptr := decodePointer(t, r)
		if len(r.Value) > 1024 {
			t.Errorf("record %d: pointer of %d bytes, want under 1 KiB", i, len(r.Value))
		}
		if ptr.Size != int64(sizes[i]) || ptr.SHA256 != fmt.Sprintf("%x", digest(sent[i].Value)) || !strings.HasPrefix(ptr.Key, "default/media.images/lfs/") {
			t.Errorf("record %d: pointer %+v, want size %d, its SHA-256, a key under default/media.images/lfs/", i, ptr, sizes[i])
		}
		if ptr.OriginalHeaders["traceparent"] != string(sent[i].Headers[0].Value) {
			t.Errorf("record %d: pointer's original_headers %v lack the traceparent", i, ptr.OriginalHeaders)
		}
	}
	if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", e.kp.Cmd.Process.Pid)); err == nil {
		for _, l := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(l, "VmHWM:") {
				t.Logf("kproxy's peak RSS: %s", strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:")))
			}
		}
	}
	if n := len(e.objects("default/media.images/")); n != 3 {
		t.Errorf("bucket holds %d objects under default/media.images/, want the 3 large values", n)
	}
	if got := e.metric(`kproxy_large_messages_objects_total{operation="offload"}`); got != 3 {
		t.Errorf("objects offloaded = %v, want 3", got)
	}
	if got := e.metric(`kproxy_large_messages_objects_total{operation="resolve"}`); got != 3 {
		t.Errorf("objects resolved = %v, want 3", got)
	}
}
