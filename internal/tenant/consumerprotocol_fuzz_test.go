package tenant

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzConsumerProtocolBlobs: no embedded blob, from a client or from the
// upstream, panics; what kproxy shows a client reads as consumer protocol
// and names only the tenant's topics.
func FuzzConsumerProtocolBlobs(f *testing.F) {
	f.Add(consumerMetadata(3, []string{"team-a.orders", "team-b.orders"}, "team-b.orders"))
	f.Add(consumerMetadata(0, []string{"orders"}))
	f.Add(consumerAssignment("team-a.orders", "team-b.orders"))
	f.Add([]byte{0, 0, 0x7f, 0xff, 0xff, 0xff})
	f.Add([]byte{})
	m := New(teamANames)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = upConsumerMetadata(m, b)
		_, _ = upConsumerAssignment(m, b)
		_ = isExactConsumerAssignment(b)
		md, _, err := readConsumerMetadata(downConsumerMetadata(m, b))
		if err != nil {
			t.Fatalf("metadata shown to the client does not read: %v", err)
		}
		var want []string
		if orig, _, err := readConsumerMetadata(b); err == nil {
			for _, tp := range orig.Topics {
				if rest, ok := strings.CutPrefix(tp, "team-a."); ok && rest != "" {
					want = append(want, rest)
				}
			}
		}
		if !slices.Equal(md.Topics, want) {
			t.Fatalf("shown topics %q, want the tenant's %q", md.Topics, want)
		}
		down := downConsumerAssignment(m, b)
		if len(down) == 0 {
			return
		}
		var a kmsg.ConsumerMemberAssignment
		if err := a.ReadFrom(down); err != nil {
			t.Fatalf("assignment shown to the client does not read: %v", err)
		}
	})
}
