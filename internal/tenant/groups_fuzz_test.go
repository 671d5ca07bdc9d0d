package tenant

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzGroupEntries: any request or response body of a group, transaction
// or ACL key that kmsg decodes is mapped without a panic, and what the
// mapping leaves encodes again.
func FuzzGroupEntries(f *testing.F) {
	for _, e := range groupAPIs() {
		req := kmsg.RequestForKey(e.key)
		req.SetVersion(req.MaxVersion())
		f.Add(uint8(e.key), uint8(req.MaxVersion()), false, req.AppendTo(nil))
		resp := kmsg.ResponseForKey(e.key)
		resp.SetVersion(req.MaxVersion())
		f.Add(uint8(e.key), uint8(req.MaxVersion()), true, resp.AppendTo(nil))
	}
	f.Add(uint8(kmsg.JoinGroup), uint8(9), false, []byte("\x00\x03app\x00\x00\x75\x30\x00\x00\x75\x30\x00\x00\x09consumer\x00\x00\x00\x01\x00\x05range\x00\x00\x00\x03\x00\x00\xff"))
	m := New(Names{Topic: "team-a.", Group: "team-g.", TransactionalID: "team-x."})
	f.Fuzz(func(t *testing.T, key, version uint8, isResponse bool, body []byte) {
		e := buildTable().lookup(int16(key))
		if e == nil || kmsg.RequestForKey(int16(key)) == nil {
			return
		}
		req := kmsg.RequestForKey(int16(key))
		if int16(version) > req.MaxVersion() {
			return
		}
		req.SetVersion(int16(version))
		if !isResponse {
			if req.ReadFrom(body) != nil || e.request == nil {
				return
			}
			_, _ = e.request(context.Background(), m, req)
			_ = req.AppendTo(nil)
			return
		}
		resp := kmsg.ResponseForKey(int16(key))
		resp.SetVersion(int16(version))
		if resp.ReadFrom(body) != nil || e.response == nil {
			return
		}
		var sent kmsg.Request = req // a request as sent, or none (not decoded)
		if len(body)%2 == 1 {
			sent = nil
		}
		_ = e.response(m, sent, resp)
		_ = resp.AppendTo(nil)
	})
}
