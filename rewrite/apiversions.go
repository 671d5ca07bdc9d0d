package rewrite

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/protocol"
)

// APIVersionsClamp is a filter of ApiVersions(18) responses that limits what a
// client may negotiate to what kproxy can decode.
//
// The proxy decodes responses with kmsg, so a client must never pick a key
// or a version kmsg does not know: the response would be undecodable and, for
// keys that need rewriting, could only be failed. For each advertised API key
// the filter therefore
//
//   - drops the key if kmsg does not know it at all;
//   - lowers MaxVersion to the highest version kmsg knows;
//   - drops the key if, after that, MinVersion > MaxVersion (the upstream
//     only speaks versions kmsg cannot decode).
//
// Everything else (ErrorCode, throttle, features, unknown tags) is kept, so an
// UNSUPPORTED_VERSION answer, which the upstream sends in the v0 layout with
// only the ApiVersions key, still reaches the client unchanged apart from the
// clamp, and the client retries at a version both sides accept.
//
// APIVersionsClamp has no state and is safe for concurrent use.
type APIVersionsClamp struct{}

var _ filter.Filter = APIVersionsClamp{}

// Register registers Clamp for every ApiVersions response.
func (c APIVersionsClamp) Register(r *filter.Registry) { filter.OnResponse(r, c.Clamp) }

// Phase places the clamp in filter.PhaseNegotiate.
func (APIVersionsClamp) Phase() filter.Phase { return filter.PhaseNegotiate }

// Clamp clamps the ApiKeys of r in place. Surviving entries keep their
// order.
func (APIVersionsClamp) Clamp(r *kmsg.ApiVersionsResponse) error {
	// Filter in place: the decoded slice is ours to reuse and the result is
	// never longer than the input.
	kept := r.ApiKeys[:0]
	for _, k := range r.ApiKeys {
		maxV, ok := clampVersions(k.ApiKey, k.MinVersion, k.MaxVersion)
		if !ok {
			continue
		}
		k.MaxVersion = maxV
		kept = append(kept, k)
	}
	// Zero the tail so dropped entries' UnknownTags are not kept alive by the
	// backing array.
	clear(r.ApiKeys[len(kept):])
	r.ApiKeys = kept
	return nil
}

// clampVersions returns the highest version of key that both the upstream
// (which advertised minV..maxV) and kmsg support, and false if there is none
// — either kmsg does not know key, or the upstream's range starts above what
// kmsg knows. It is pure: the answer depends only on its arguments and the
// kmsg version compiled in (which the API table holds).
func clampVersions(key, minV, maxV int16) (int16, bool) {
	if !protocol.KnownAPI(key) {
		return 0, false
	}
	maxV = min(maxV, protocol.MaxVersion(key))
	if minV > maxV {
		return 0, false
	}
	return maxV, true
}
