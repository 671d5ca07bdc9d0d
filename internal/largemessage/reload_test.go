package largemessage

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/largemessage/largemessageconfig"
)

// A reload applies new topic rules and resolve_on_fetch to the next
// request, and warns that a changed store needs a restart.
func TestReloadAppliesRulesAndWarnsOfTheStore(t *testing.T) {
	store := &memStore{putsOK: -1}
	f := newTestFilter(t, store, 10)
	off := false
	cfg := &largemessageconfig.Config{Store: largemessageconfig.StoreConfig{S3: &largemessageconfig.S3Config{Bucket: "elsewhere", Region: "r"}},
		Topics: []largemessageconfig.TopicRule{{Match: "docs.*", ThresholdBytes: 10}}, ResolveOnFetch: &off}
	var log bytes.Buffer
	if err := f.Reload(cfg, zerolog.New(&log)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "only after a restart") {
		t.Errorf("reload log %q: want the restart warning for the changed store", log.String())
	}
	big := bytes.Repeat([]byte("v"), 100)
	for topic, want := range map[string]int{"media.x": 0, "docs.y": 1} {
		before := store.count()
		f.produce(&filter.Conn{}, produceRequest(topic, batch(0, 0, 7, testRecord{value: big})))
		if got := store.count() - before; got != want {
			t.Errorf("%s after the reload: %d objects stored, want %d", topic, got, want)
		}
	}
	if v := f.fetchRequest(&filter.Conn{}, kmsg.NewPtrFetchRequest()); v.OnResponse != nil {
		t.Error("fetch resolved with resolve_on_fetch turned off by the reload")
	}
}
