package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A filler section must be exactly as long as asked, and a Fetch response
// whose leader endpoints it replaced must decode with no brokers.
func TestAppendFillerTagsReplacesEndpoints(t *testing.T) {
	for v := int16(12); v <= MaxVersion(FetchKey); v++ {
		body := fetchResponseBody(v, true)
		s := &sliceStepper{b: body}
		if err := WalkFetchResponseToTags(v, s); err != nil {
			t.Fatal(err)
		}
		tagsAt := len(body) - s.Remaining()
		filled, err := AppendFillerTags(append([]byte(nil), body[:tagsAt]...), s.Remaining())
		if err != nil {
			t.Fatal(err)
		}
		if len(filled) != len(body) {
			t.Fatalf("v%d: filler changed the size from %d to %d", v, len(body), len(filled))
		}
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(v)
		if err := resp.ReadFrom(filled); err != nil {
			t.Fatalf("v%d: response with filler tags does not decode: %v", v, err)
		}
		if len(resp.Brokers) != 0 || len(resp.Topics) != 2 {
			t.Fatalf("v%d: decoded %d brokers, %d topics; want 0 and 2", v, len(resp.Brokers), len(resp.Topics))
		}
	}
}

func TestAppendFillerTagsSizes(t *testing.T) {
	for n := 3; n < 20000; n++ {
		b, err := AppendFillerTags(nil, n)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if len(b) != n {
			t.Fatalf("n=%d: got %d bytes", n, len(b))
		}
		if err := WalkTags(&sliceStepper{b: b}); err != nil {
			t.Fatalf("n=%d: filler is not a valid tag section: %v", n, err)
		}
	}
	if _, err := AppendFillerTags(nil, 2); err == nil {
		t.Error("a 2-byte filler cannot hold a tag, but was made")
	}
}
