package policy

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

func TestAuditLinePerDenial(t *testing.T) {
	var out logbuf.Buffer
	enf := newTestEnforcer(t, `
policy:
  rules:
    - {name: w, principals: ["*"], allow: [write], topics: ["ok"]}
`, &out)
	conn := &filter.Conn{ClientID: "auditor", Listener: "node-1", Client: netip.MustParseAddrPort("10.9.8.7:5555")}
	filterRequest(enf, conn, produceReq(9, -1, "ok:0", "nope:00"))
	enf.Close()
	lines := logbuf.JSONLines[map[string]string](t, &out)
	if len(lines) != 1 {
		t.Fatalf("%d audit lines, want 1 (denials only): %v", len(lines), lines)
	}
	l := lines[0]
	want := map[string]string{
		"principal": "User:ANONYMOUS", "client": "10.9.8.7:5555", "client_id": "auditor", "listener": "node-1",
		"api": "Produce", "operation": "Write", "resource_type": "Topic", "resource": "nope",
		"decision": DecisionDeny, "rule": DefaultRule,
	}
	for k, v := range want {
		if l[k] != v {
			t.Errorf("audit %s = %q, want %q", k, l[k], v)
		}
	}
	if _, err := time.Parse(time.RFC3339Nano, l["time"]); err != nil {
		t.Errorf("time %q: %v", l["time"], err)
	}
}

func TestAuditLogAllowedAndAuditMode(t *testing.T) {
	var out logbuf.Buffer
	enf := newTestEnforcer(t, `
policy:
  mode: audit
  rules:
    - {name: w, principals: ["*"], allow: [write], topics: ["ok"]}
audit: {log_allowed: true}
`, &out)
	req := produceReq(9, -1, "ok:0", "nope:0")
	v := filterRequest(enf, testConn, req)
	if v.Respond != nil || v.Modified || len(req.Topics) != 2 {
		t.Fatalf("audit mode changed the request: %+v", v)
	}
	enf.Close()
	var decisions []string
	for _, l := range logbuf.JSONLines[map[string]string](t, &out) {
		decisions = append(decisions, l["resource"]+":"+l["decision"]+":"+l["rule"])
	}
	if got := strings.Join(decisions, " "); got != "ok:allow:w nope:audit_deny:default" {
		t.Errorf("audit lines %s", got)
	}
}

// blockingWriter blocks every Write until released.
type blockingWriter struct{ release chan struct{} }

func (b *blockingWriter) Write(p []byte) (int, error) { <-b.release; return len(p), nil }

func TestAuditNeverBlocksAndCountsDrops(t *testing.T) {
	w := &blockingWriter{release: make(chan struct{})}
	reg := prometheus.NewRegistry()
	cfg := parsePolicy(t, "policy: {default: deny}\naudit: {buffer_size: 4}")
	enf, err := New(cfg.Policy, cfg.Audit, WithAuditWriter(w), WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < 100; i++ {
		filterRequest(enf, testConn, produceReq(9, -1, "t:0"))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("100 denials took %v with a stuck audit writer", d)
	}
	// At most buffer_size queued plus one in the writer's hands.
	if dropped := counterValue(enf.metrics.auditDropped); dropped < 100-5 {
		t.Errorf("dropped %v audit lines, want at least 95", dropped)
	}
	close(w.release)
	enf.Close()
	if n := counterValue(enf.metrics.denied); n != 100 {
		t.Errorf("denied decisions %v, want 100", n)
	}
}

func TestReloadSwapsPolicy(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := parsePolicy(t, "policy: {default: deny}")
	enf, err := New(cfg.Policy, nil, WithRegisterer(reg), WithAuditWriter(&bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	defer enf.Close()
	req := func() filter.Verdict { return filterRequest(enf, testConn, kmsg.NewPtrHeartbeatRequest()) }
	if req().Respond == nil {
		t.Fatal("default deny allowed a heartbeat")
	}
	if err := enf.Reload(parsePolicy(t, "policy: {default: allow}").Policy, nil); err != nil {
		t.Fatal(err)
	}
	if v := req(); v.Respond != nil {
		t.Fatalf("after reload to allow: %+v", v)
	}
	if err := enf.Reload(nil, nil); err != nil {
		t.Fatal(err)
	}
	if active, _ := enf.Active(); active {
		t.Error("policy still active after reload without one")
	}
	if n := counterValue(enf.metrics.reloadOK); n != 2 {
		t.Errorf("reload successes %v", n)
	}
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}
