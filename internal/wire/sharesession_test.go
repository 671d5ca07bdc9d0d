package wire

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareSessionSeeds are ShareFetch and ShareAcknowledge request bodies of
// every version, for the fuzz corpus and the table test.
func shareSessionSeeds() [][]byte {
	group, member := "team-b.sg", "member-0001"
	var seeds [][]byte
	for v := int16(0); v <= MaxVersion(int16(kmsg.ShareFetch)); v++ {
		r := kmsg.NewPtrShareFetchRequest()
		r.SetVersion(v)
		r.GroupID, r.MemberID, r.ShareSessionEpoch = &group, &member, 3
		seeds = append(seeds, r.AppendTo(nil))
	}
	for v := int16(0); v <= MaxVersion(int16(kmsg.ShareAcknowledge)); v++ {
		r := kmsg.NewPtrShareAcknowledgeRequest()
		r.SetVersion(v)
		r.GroupID, r.MemberID, r.ShareSessionEpoch = &group, &member, 3
		seeds = append(seeds, r.AppendTo(nil))
	}
	return seeds
}

// The share session fields read raw are those kmsg decodes.
func TestShareSessionMatchesDecoding(t *testing.T) {
	for _, body := range shareSessionSeeds() {
		g, m, epoch, err := ShareSession(body)
		if err != nil || string(g) != "team-b.sg" || string(m) != "member-0001" || epoch != 3 {
			t.Errorf("read %q %q %d (%v) from %x", g, m, epoch, err, body)
		}
		if _, _, _, err := ShareSession(body[:len("team-b.sg")+len("member-0001")+2+3]); !errors.Is(err, ErrShortBuffer) {
			t.Errorf("a body cut before the epoch's end read without ErrShortBuffer: %v", err)
		}
	}
}

// The response's error code is where kmsg encodes it.
func TestShareResponseErrorOffsetMatchesEncoding(t *testing.T) {
	for _, resp := range []kmsg.Response{kmsg.NewPtrShareFetchResponse(), kmsg.NewPtrShareAcknowledgeResponse()} {
		for v := int16(0); v <= MaxVersion(resp.Key()); v++ {
			resp.SetVersion(v)
			switch r := resp.(type) {
			case *kmsg.ShareFetchResponse:
				r.ErrorCode = 0x0102
			case *kmsg.ShareAcknowledgeResponse:
				r.ErrorCode = 0x0102
			}
			frame := AppendResponseFrame(nil, 9, resp)
			if got := frame[ShareResponseErrorOffset : ShareResponseErrorOffset+2]; string(got) != "\x01\x02" {
				t.Errorf("%s v%d: bytes at %d are %x", APIName(resp.Key()), v, ShareResponseErrorOffset, got)
			}
		}
	}
}

// FuzzShareSession: reading a share session raw never panics, fails only
// with a sentinel error, and for any ShareFetch or ShareAcknowledge body
// kmsg decodes reads what kmsg decodes.
func FuzzShareSession(f *testing.F) {
	for _, s := range shareSessionSeeds() {
		f.Add(s)
		f.Add(s[:len(s)/2])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		g, m, epoch, err := ShareSession(body)
		if err != nil && !knownError(err) {
			t.Fatalf("error %v wraps no sentinel", err)
		}
		for _, req := range []kmsg.Request{kmsg.NewPtrShareFetchRequest(), kmsg.NewPtrShareAcknowledgeRequest()} {
			if req.ReadFrom(body) != nil {
				continue
			}
			var wg, wm *string
			var we int32
			switch r := req.(type) {
			case *kmsg.ShareFetchRequest:
				wg, wm, we = r.GroupID, r.MemberID, r.ShareSessionEpoch
			case *kmsg.ShareAcknowledgeRequest:
				wg, wm, we = r.GroupID, r.MemberID, r.ShareSessionEpoch
			}
			if err != nil || !sameNullable(g, wg) || !sameNullable(m, wm) || epoch != we {
				t.Fatalf("read %q %q %d (%v), kmsg decodes %v %v %d", g, m, epoch, err, wg, wm, we)
			}
		}
	})
}

func sameNullable(b []byte, s *string) bool {
	if s == nil {
		return b == nil
	}
	return b != nil && string(b) == *s
}
