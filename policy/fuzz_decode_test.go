package policy_test

import (
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/policy"
	"github.com/kproxy/kproxy/protocol"
)

const fuzzPolicy = `
upstream: {bootstrap_servers: ["a:1"]}
policy:
  default: deny
  rules:
    - {name: writers, principals: ["User:alice"], allow: [write, describe, read], topics: ["payments.*"], groups: ["pay-*"], transactional_ids: ["pay-*"]}
    - {name: readers, principals: ["*"], allow: [describe, read], topics: ["public.*"], groups: ["*"]}
    - {name: no-delete, principals: ["*"], deny: [delete], topics: ["*"]}
  governance:
    - name: durable
      principals: ["*"]
      topics: ["payments.*"]
      produce: {required_acks: all, max_batch_bytes: 1048576}
    - name: shapes
      topic_changes: {max_partitions: 64, required_configs: ["min.insync.replicas >= 2"]}
`

// FuzzPolicyDecode feeds arbitrary bodies, for every API key and version
// the policy decodes, through protocol.DecodeRequest and the handler the
// enforcer registers for it, and the response hook it returns through a response of
// the same shape (default, and the body decoded as a response). Nothing
// may panic, and decoding may allocate no more than
// wire.MaxDecodedSize of the body.
func FuzzPolicyDecode(f *testing.F) {
	cfg, err := config.Parse(strings.NewReader(fuzzPolicy))
	if err != nil {
		f.Fatal(err)
	}
	enf, err := policy.New(cfg.Policy, cfg.Audit, policy.WithAuditWriter(io.Discard))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { enf.Close() })
	var reg filter.Registry
	enf.Register(&reg)
	handlers := map[int16]filter.RequestHandler{}
	var keys []int16
	for _, h := range reg.Requests() {
		handlers[h.Key] = h
		keys = append(keys, h.Key)
	}
	for i, key := range keys {
		req := kmsg.RequestForKey(key)
		for _, v := range []int16{0, protocol.MaxVersion(key)} {
			req.SetVersion(v)
			f.Add(uint16(i), v, req.AppendTo(nil))
		}
		// The decoder learns a key's wire layout on its first use: learn
		// it here, so that the allocation measured below is the decode's.
		wire.DecodedSize(key, 0, nil, false)
	}
	conn := &filter.Conn{ID: 1, Listener: "bootstrap", User: "alice", ClientID: "pay-app"}
	f.Fuzz(func(t *testing.T, keyIndex uint16, version int16, body []byte) {
		key := keys[int(keyIndex)%len(keys)]
		version = int16(uint16(version) % uint16(protocol.MaxVersion(key)+1))
		var req kmsg.Request
		var err error
		if n := allocatedBytes(func() { req, err = protocol.DecodeRequest(key, version, body) }); n > uint64(wire.MaxDecodedSize(len(body)))+4096 {
			t.Fatalf("%s v%d: decoding %d bytes allocated %d", protocol.APIName(key), version, len(body), n)
		}
		if err != nil {
			return
		}
		v := handlers[key].Handle(conn, req)
		if v.OnResponse == nil {
			return
		}
		resp := req.ResponseKind()
		resp.SetVersion(version)
		_ = v.OnResponse(resp)
		if decoded, err := protocol.DecodeResponse(key, version, body); err == nil {
			// A fresh verdict: a hook may keep state from its request.
			if v := handlers[key].Handle(conn, req); v.OnResponse != nil {
				_ = v.OnResponse(decoded)
			}
		}
	})
}

// allocatedBytes is what fn allocates; the fuzz function runs alone in its
// worker, so other goroutines add little.
func allocatedBytes(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
