package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func sessionFetchRequest(version int16, id, epoch int32) []byte {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(version)
	req.SessionID, req.SessionEpoch = id, epoch
	req.Topics = []kmsg.FetchRequestTopic{{Topic: "t", Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 1}}}}
	return req.AppendTo(nil)
}

func sessionFetchResponse(version int16, code int16, id int32) []byte {
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(version)
	resp.ThrottleMillis, resp.ErrorCode, resp.SessionID = 7, code, id
	return resp.AppendTo(nil)
}

// TestFetchSessionFields: the session fields read from raw bytes are
// kmsg's, at every version.
func TestFetchSessionFields(t *testing.T) {
	for v := int16(0); v <= kmsgMaxVersion(FetchKey); v++ {
		id, epoch, err := FetchRequestSession(v, sessionFetchRequest(v, 42, 3))
		wantID, wantEpoch := int32(42), int32(3)
		if v < 7 {
			wantID, wantEpoch = FetchSessionless, -1
		}
		if err != nil || id != wantID || epoch != wantEpoch {
			t.Errorf("request v%d: %d, %d, %v; want %d, %d", v, id, epoch, err, wantID, wantEpoch)
		}
		code, id, err := FetchResponseSession(v, sessionFetchResponse(v, 70, 42))
		wantCode := int16(70)
		if v < 7 {
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

// FuzzFetchSession: the raw readers never panic, fail only with a
// sentinel error, and agree with kmsg whenever kmsg decodes the body.
func FuzzFetchSession(f *testing.F) {
	for _, v := range []int16{4, 7, 12, 15, kmsgMaxVersion(FetchKey)} {
		f.Add(v, sessionFetchRequest(v, 42, 3), sessionFetchResponse(v, 0, 42))
	}
	f.Add(int16(13), []byte{1, 2, 3}, []byte{0, 0})
	f.Fuzz(func(t *testing.T, version int16, reqBody, respBody []byte) {
		id, epoch, err := FetchRequestSession(version, reqBody)
		if err != nil && !knownError(err) {
			t.Fatalf("error %v wraps no sentinel", err)
		}
		code, respID, respErr := FetchResponseSession(version, respBody)
		if respErr != nil && !knownError(respErr) {
			t.Fatalf("error %v wraps no sentinel", respErr)
		}
		if version < 7 || version > kmsgMaxVersion(FetchKey) {
			return
		}
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(version)
		if req.ReadFrom(reqBody) == nil && (err != nil || id != req.SessionID || epoch != req.SessionEpoch) {
			t.Fatalf("kmsg decodes session %d epoch %d; read %d, %d, %v", req.SessionID, req.SessionEpoch, id, epoch, err)
		}
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(version)
		if resp.ReadFrom(respBody) == nil && (respErr != nil || code != resp.ErrorCode || respID != resp.SessionID) {
			t.Fatalf("kmsg decodes error %d session %d; read %d, %d, %v", resp.ErrorCode, resp.SessionID, code, respID, respErr)
		}
	})
}
