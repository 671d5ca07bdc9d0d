package policy

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// rawPathPolicies cover every check handleProduce makes: Write on topics
// and transactional ids, required_acks, the batch checks, client_id_pattern
// and forbidden_apis, in enforce and audit mode.
var rawPathPolicies = map[string]string{
	"enforce": `
policy:
  rules:
    - {name: writers, principals: ["*"], allow: [write], topics: ["ok.*"], transactional_ids: ["ok-*"]}
  governance:
    - {name: durable, topics: ["ok.durable"], produce: {required_acks: all}}
    - {name: no-gzip, topics: ["ok.strict"], produce: {allowed_compression: [none, lz4]}}
    - {name: small, topics: ["ok.small"], produce: {max_batch_bytes: 200, require_idempotence: true}}
audit: {log_allowed: true}
`,
	"audit": `
policy:
  mode: audit
  rules:
    - {name: writers, principals: ["*"], allow: [write], topics: ["ok.*"], transactional_ids: ["ok-*"]}
  governance:
    - {name: no-gzip, topics: ["ok.strict"], produce: {allowed_compression: [none, lz4]}}
audit: {log_allowed: true}
`,
	"client-id": `
policy:
  default: allow
  governance:
    - {name: ids, client_id_pattern: "svc-*"}
audit: {log_allowed: true}
`,
	"forbidden": `
policy:
  default: allow
  governance:
    - {name: no-produce, principals: ["client_id:unit"], forbidden_apis: [produce]}
audit: {log_allowed: true}
`,
}

type rawPathCase struct {
	name    string
	req     *kmsg.ProduceRequest
	allowed map[string]bool // policies under which the raw path must decide it (client-id: see the test)
}

func rawPathCases() []rawPathCase {
	withTxn := func(r *kmsg.ProduceRequest, id string) *kmsg.ProduceRequest { r.TransactionID = &id; return r }
	withRecords := func(r *kmsg.ProduceRequest, records []byte) *kmsg.ProduceRequest {
		r.Topics[0].Partitions[0].Records = records
		return r
	}
	byID := produceReq(13, -1, "ok.a:0")
	byID.Topics[0].TopicID = [16]byte{9}
	return []rawPathCase{
		{"allowed", produceReq(9, -1, "ok.a:00", "ok.b:0"), map[string]bool{"enforce": true, "audit": true, "forbidden": false}},
		{"allowed v3", produceReq(3, -1, "ok.a:0"), map[string]bool{"enforce": true, "audit": true}},
		{"denied topic", produceReq(9, -1, "ok.a:0", "denied:0"), nil},
		{"all denied", produceReq(9, -1, "denied:0"), nil},
		{"transactional id allowed", withTxn(produceReq(9, -1, "ok.a:0"), "ok-1"), map[string]bool{"enforce": true, "audit": true}},
		{"transactional id denied", withTxn(produceReq(9, -1, "ok.a:0"), "bad"), nil},
		{"transactional batch without id", withRecords(produceReq(9, -1, "ok.a:0"), batch(0x10, 5, 10)), map[string]bool{"audit": true}},
		{"acks 1 where all is required", produceReq(9, 1, "ok.a:0", "ok.durable:0"), map[string]bool{"audit": true}},
		{"acks 1 elsewhere", produceReq(9, 1, "ok.a:0"), map[string]bool{"enforce": true, "audit": true}},
		{"gzip where forbidden", produceReq(9, -1, "ok.strict:01"), nil},
		{"lz4 where allowed", produceReq(9, -1, "ok.strict:03"), map[string]bool{"enforce": true, "audit": true}},
		{"oversized batch", withRecords(produceReq(9, -1, "ok.small:0"), append(batch(0, 5, 10), batch(0, 5, 300)...)), map[string]bool{"audit": true}},
		{"no producer id", withRecords(produceReq(9, -1, "ok.small:0"), batch(0, -1, 10)), map[string]bool{"audit": true}},
		{"idempotent small batch", withRecords(produceReq(9, -1, "ok.small:0"), batch(0, 5, 10)), map[string]bool{"enforce": true, "audit": true}},
		{"unknown topic id", byID, nil},
	}
}

// TestRawProduceDecisionMatchesTypedHandler: for every policy and request,
// the engine's way (the raw decision on the body, the typed handler on the
// decoded request when undecided) gives the same verdict and writes the
// same audit lines as the typed handler alone, and the raw path decides the
// requests the policy allows whole.
func TestRawProduceDecisionMatchesTypedHandler(t *testing.T) {
	for pname, yaml := range rawPathPolicies {
		for _, tc := range rawPathCases() {
			for _, clientID := range []string{"unit", "svc-1"} {
				conn := *testConn
				conn.ClientID = clientID
				body := tc.req.AppendTo(nil)
				var viaRaw, direct logbuf.Buffer
				rawEnf, directEnf := newTestEnforcer(t, yaml, &viaRaw), newTestEnforcer(t, yaml, &direct)

				v, decided := decideRaw(rawEnf, &conn, tc.req.Key(), tc.req.GetVersion(), body)
				if !decided {
					v = filterRequest(rawEnf, &conn, decodeProduce(t, tc.req.GetVersion(), body))
				}
				want := filterRequest(directEnf, &conn, decodeProduce(t, tc.req.GetVersion(), body))
				rawEnf.Close()
				directEnf.Close()

				where := pname + "/" + tc.name + "/client " + clientID
				if verdictKind(v) != verdictKind(want) {
					t.Errorf("%s: verdict %s, the typed handler alone %s", where, verdictKind(v), verdictKind(want))
				}
				if decided && verdictKind(want) != "forward" {
					t.Errorf("%s: decided from the raw body, but the typed handler %s", where, verdictKind(want))
				}
				if got, exp := auditSummary(t, &viaRaw), auditSummary(t, &direct); got != exp {
					t.Errorf("%s: audit lines\n%s\nwant\n%s", where, got, exp)
				}
				mustDecide := tc.allowed[pname]
				if pname == "client-id" { // default allow: all but these, from a matching client id
					mustDecide = clientID == "svc-1" && tc.name != "transactional batch without id" && tc.name != "unknown topic id"
				}
				if mustDecide && !decided {
					t.Errorf("%s: allowed whole, but left for the decoder", where)
				}
			}
		}
	}
}

func decodeProduce(t *testing.T, version int16, body []byte) *kmsg.ProduceRequest {
	t.Helper()
	r := kmsg.NewPtrProduceRequest()
	r.SetVersion(version)
	if err := r.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	return r
}

func verdictKind(v filter.Verdict) string {
	switch {
	case v.Close != nil:
		return "close"
	case v.Respond != nil:
		return "respond"
	case v.Modified:
		return "split"
	}
	return "forward"
}

// auditSummary is the audit lines without their time.
func auditSummary(t *testing.T, b *logbuf.Buffer) string {
	var lines []string
	for _, l := range logbuf.JSONLines[map[string]string](t, b) {
		delete(l, "time")
		var fields []string
		for _, k := range []string{"decision", "operation", "resource_type", "resource", "rule", "reason"} {
			fields = append(fields, k+"="+l[k])
		}
		lines = append(lines, strings.Join(fields, " "))
	}
	return strings.Join(lines, "\n")
}

// An allowed produce decided from its raw body allocates nothing per
// request in the policy.
func TestInspectProduceAllocatesNothing(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	enf := newTestEnforcer(t, benchPolicy(50), nil)
	conn := *testConn
	conn.ClientID = "svc-7-orders"
	req := produceReq(9, -1, "team7.a:000", "team7.b:0")
	body := req.AppendTo(nil)
	if _, decided := decideRaw(enf, &conn, req.Key(), 9, body); !decided {
		t.Fatal("allowed produce left undecided")
	}
	decide := handlersOf(enf)[req.Key()].DecideRaw
	if allocs := testing.AllocsPerRun(200, func() { decide(&conn, 9, body) }); allocs != 0 {
		t.Errorf("%.0f allocations per allowed produce", allocs)
	}
}

// FuzzInspectProduce: for any Produce body and version, the raw decision
// never panics, and when it decides, the decoded path agrees: kmsg decodes
// the body and the typed handler forwards it unchanged.
func FuzzInspectProduce(f *testing.F) {
	for _, tc := range rawPathCases() {
		f.Add(tc.req.GetVersion(), tc.req.AppendTo(nil))
	}
	enf := newTestEnforcer(f, rawPathPolicies["enforce"], nil)
	conn := *testConn
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		if version < 0 || version > kmsg.NewPtrProduceRequest().MaxVersion() {
			return
		}
		v, decided := decideRaw(enf, &conn, kmsg.Produce.Int16(), version, body)
		if !decided {
			return
		}
		if v.Respond != nil || v.Close != nil || v.Modified {
			t.Fatalf("decided with verdict %+v", v)
		}
		r := kmsg.NewPtrProduceRequest()
		r.SetVersion(version)
		if err := r.ReadFrom(body); err != nil {
			t.Fatalf("decided a body kmsg refuses: %v", err)
		}
		if want := filterRequest(enf, &conn, r); verdictKind(want) != "forward" {
			t.Fatalf("decided to forward; the typed handler: %s", verdictKind(want))
		}
	})
}
