package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchSessionSeed is a Fetch request body at version with session id and
// epoch, for the fuzz corpus and the table test.
func fetchSessionSeed(version int16, id, epoch int32) []byte {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(version)
	req.SessionID, req.SessionEpoch = id, epoch
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = "t", [16]byte{1}
	rt.Partitions = append(rt.Partitions, kmsg.NewFetchRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	return req.AppendTo(nil)
}

// The session fields read raw are the ones kmsg decodes, at every version.
func TestFetchRequestSessionMatchesDecoding(t *testing.T) {
	for v := int16(0); v <= MaxVersion(FetchKey); v++ {
		body := fetchSessionSeed(v, 0x01020304, 7)
		id, epoch, ok := FetchRequestSession(v, body)
		if v < FetchSessionsVersion {
			if ok {
				t.Errorf("v%d has no session, read %d/%d", v, id, epoch)
			}
			continue
		}
		if !ok || id != 0x01020304 || epoch != 7 {
			t.Errorf("v%d: read %d/%d (%v), want %d/7", v, id, epoch, ok, 0x01020304)
		}
		if _, _, ok := FetchRequestSession(v, body[:FetchRequestSessionOffset(v)+7]); ok {
			t.Errorf("v%d: read a session from a body cut short", v)
		}
	}
}

// FuzzFetchRequestSession: reading the session fields raw never panics
// and, for any body kmsg decodes, reads what kmsg decodes.
func FuzzFetchRequestSession(f *testing.F) {
	for _, v := range []int16{6, 7, 12, 13, 14, 15, MaxVersion(FetchKey)} {
		f.Add(v, fetchSessionSeed(v, 5, 1))
		f.Add(v, fetchSessionSeed(v, -1, -1)[:FetchRequestSessionOffset(v)+4])
	}
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		id, epoch, ok := FetchRequestSession(version, body)
		if version < 0 || version > MaxVersion(FetchKey) {
			return
		}
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(version)
		if req.ReadFrom(body) != nil {
			return
		}
		if version >= FetchSessionsVersion && (!ok || id != req.SessionID || epoch != req.SessionEpoch) {
			t.Fatalf("v%d: read %d/%d (%v), kmsg decodes %d/%d", version, id, epoch, ok, req.SessionID, req.SessionEpoch)
		}
	})
}

func sessionFetchResponse(version int16, code int16, id int32) []byte {
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(version)
	resp.ThrottleMillis, resp.ErrorCode, resp.SessionID = 7, code, id
	return resp.AppendTo(nil)
}

// TestFetchResponseSessionFields: the error code and session id read from
// a response body are kmsg's, at every version.
func TestFetchResponseSessionFields(t *testing.T) {
	for v := int16(0); v <= MaxVersion(FetchKey); v++ {
		code, id, err := FetchResponseSession(v, sessionFetchResponse(v, 70, 42))
		wantCode, wantID := int16(70), int32(42)
		if v < FetchSessionsVersion {
			wantCode, wantID = 0, FetchSessionless
		}
		if err != nil || code != wantCode || id != wantID {
			t.Errorf("response v%d: %d, %d, %v; want %d, %d", v, code, id, err, wantCode, wantID)
		}
	}
	if !FetchIncremental(42, 1) || FetchIncremental(42, 0) || FetchIncremental(42, -1) || FetchIncremental(0, -1) {
		t.Error("FetchIncremental: only a session id with an epoch past 0 continues a session")
	}
}

// FuzzFetchResponseSession: the raw reader never panics, fails only with
// a sentinel error, and agrees with kmsg whenever kmsg decodes the body.
func FuzzFetchResponseSession(f *testing.F) {
	for _, v := range []int16{4, 7, 12, 15, MaxVersion(FetchKey)} {
		f.Add(v, sessionFetchResponse(v, 0, 42))
	}
	f.Add(int16(13), []byte{0, 0})
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		code, id, err := FetchResponseSession(version, body)
		if err != nil && !knownError(err) {
			t.Fatalf("error %v wraps no sentinel", err)
		}
		if version < FetchSessionsVersion || version > MaxVersion(FetchKey) {
			return
		}
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(version)
		if resp.ReadFrom(body) == nil && (err != nil || code != resp.ErrorCode || id != resp.SessionID) {
			t.Fatalf("kmsg decodes error %d session %d; read %d, %d, %v", resp.ErrorCode, resp.SessionID, code, id, err)
		}
	})
}
