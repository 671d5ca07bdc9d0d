package tenant

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupEntry is the groupAPIs entry of key.
func groupEntry(t *testing.T, key int16) api {
	t.Helper()
	for _, e := range groupAPIs() {
		if e.key == key {
			return e
		}
	}
	t.Fatalf("no group entry for key %d", key)
	return api{}
}

// onWire is msg encoded at its version and decoded into a fresh message:
// the mapping is tested on what a real peer's bytes decode to.
func onWire[T kmsg.Request](t *testing.T, r T) T {
	t.Helper()
	fresh := kmsg.RequestForKey(r.Key()).(T)
	fresh.SetVersion(r.GetVersion())
	if err := fresh.ReadFrom(r.AppendTo(nil)); err != nil {
		t.Fatalf("decode %T v%d: %v", r, r.GetVersion(), err)
	}
	return fresh
}

// upReq decodes req from the wire, maps it up and returns it re-decoded
// as the upstream would read it, or the Answer kproxy gave instead.
func upReq[T kmsg.Request](t *testing.T, m *Mapper, req T) (T, *Answer) {
	t.Helper()
	r := onWire(t, req)
	if _, err := groupEntry(t, r.Key()).request(context.Background(), m, r); err != nil {
		a, ok := AsAnswer(err)
		if !ok {
			t.Fatalf("request %T: %v", r, err)
		}
		return r, a
	}
	return onWire(t, r), nil
}

// downResp maps an upstream response down (req as sent upstream) and
// returns it re-decoded as the client would read it.
func downResp[T kmsg.Response](t *testing.T, m *Mapper, req kmsg.Request, resp T) T {
	t.Helper()
	r := roundTripResponse(t, resp)
	if err := groupEntry(t, r.Key()).response(m, req, r); err != nil {
		t.Fatalf("response %T: %v", r, err)
	}
	return roundTripResponse(t, r)
}

func answered[T kmsg.Response](t *testing.T, a *Answer) T {
	t.Helper()
	if a == nil {
		t.Fatal("forwarded; want kproxy's answer")
	}
	r, ok := a.Response.(T)
	if !ok {
		t.Fatalf("answer is %T", a.Response)
	}
	return r
}
