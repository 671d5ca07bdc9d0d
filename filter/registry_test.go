package filter_test

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// A typed request handler is registered under its type's key and given
// the request as that type.
func TestOnRequestRegistersUnderTheTypesKey(t *testing.T) {
	var reg filter.Registry
	var got *kmsg.FetchRequest
	filter.OnRequest(&reg, func(_ *filter.Conn, req *kmsg.FetchRequest) filter.Verdict {
		got = req
		return filter.Verdict{}
	})
	hs := reg.Requests()
	if len(hs) != 1 || hs[0].Key != int16(kmsg.Fetch) {
		t.Fatalf("registered %+v, want one handler for Fetch", hs)
	}
	req := kmsg.NewPtrFetchRequest()
	if v := hs[0].Handle(&filter.Conn{}, req); v.Close != nil || got != req {
		t.Fatalf("handler got %p (verdict %+v), want %p", got, v, req)
	}
	if err := reg.Err(); err != nil {
		t.Fatal(err)
	}
}

// A request of another type than the handler takes closes the connection
// with an error instead of panicking.
func TestOnRequestWrongTypeCloses(t *testing.T) {
	var reg filter.Registry
	called := false
	filter.OnRequest(&reg, func(*filter.Conn, *kmsg.FetchRequest) filter.Verdict { called = true; return filter.Verdict{} })
	v := reg.Requests()[0].Handle(&filter.Conn{}, kmsg.NewPtrProduceRequest())
	if v.Close == nil || called {
		t.Fatalf("verdict %+v, handler called %v: want a Close and no call", v, called)
	}
}

// A Then hook given a response of another type (or none) returns an error
// and is not called; given its own type it runs.
func TestThenChecksTheType(t *testing.T) {
	calls := 0
	hook := filter.Then(func(*kmsg.MetadataResponse) error { calls++; return nil })
	for _, resp := range []kmsg.Response{kmsg.NewPtrProduceResponse(), nil} {
		if err := hook(resp); err == nil || !strings.Contains(err.Error(), "MetadataResponse") {
			t.Errorf("hook given %T: error %v, want one naming the type it takes", resp, err)
		}
	}
	if calls != 0 {
		t.Fatalf("hook called %d times for the wrong types", calls)
	}
	if err := hook(kmsg.NewPtrMetadataResponse()); err != nil || calls != 1 {
		t.Fatalf("hook given its type: %v, %d calls", err, calls)
	}
}

// A typed response handler keeps its options and is given its type.
func TestOnResponseOptions(t *testing.T) {
	var reg filter.Registry
	filter.OnResponse(&reg, func(*kmsg.ProduceResponse) error { return nil },
		filter.NeedByVersion(func(v int16) filter.Need { return filter.Need(v % 4) }),
		filter.InspectRaw(func(int16, []byte) bool { return true }))
	hs := reg.Responses()
	if len(hs) != 1 || hs[0].Key != int16(kmsg.Produce) || hs[0].Need == nil || hs[0].InspectRaw == nil {
		t.Fatalf("registered %+v", hs)
	}
	if hs[0].Need(3) != filter.Decode {
		t.Errorf("Need(3) = %v", hs[0].Need(3))
	}
	if err := hs[0].Handle(kmsg.NewPtrFetchResponse()); err == nil {
		t.Error("handler accepted a Fetch response")
	}
}

// An interface type names no API key: registering it is an error the
// engine reports, not a handler under a made-up key.
func TestInterfaceTypeIsARegistrationError(t *testing.T) {
	var reg filter.Registry
	filter.OnRequest(&reg, func(*filter.Conn, kmsg.Request) filter.Verdict { return filter.Verdict{} })
	filter.OnResponse(&reg, func(kmsg.Response) error { return nil })
	if len(reg.Requests()) != 0 || len(reg.Responses()) != 0 {
		t.Fatalf("registered %+v %+v", reg.Requests(), reg.Responses())
	}
	if err := reg.Err(); err == nil || !strings.Contains(err.Error(), "OnRequest") || !strings.Contains(err.Error(), "OnResponse") {
		t.Fatalf("Err() = %v, want both registrations named", err)
	}
}
