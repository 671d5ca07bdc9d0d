package policy

import (
	"bytes"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/quota"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

func TestAuditLinePerDenial(t *testing.T) {
	enf, out := auditedEnforcer(t, `
policy:
  rules:
    - {name: w, principals: ["*"], allow: [write], topics: ["ok"]}
`)
	conn := &filter.Conn{ClientID: "auditor", Listener: "node-1", Client: netip.MustParseAddrPort("10.9.8.7:5555")}
	filterRequest(enf, conn, produceReq(9, -1, "ok:0", "nope:00"))
	enf.Close()
	lines := logbuf.JSONLines[map[string]string](t, out)
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
	enf, out := auditedEnforcer(t, `
policy:
  mode: audit
  rules:
    - {name: w, principals: ["*"], allow: [write], topics: ["ok"]}
audit: {log_allowed: true}
`)
	req := produceReq(9, -1, "ok:0", "nope:0")
	v := filterRequest(enf, testConn, req)
	if v.Respond != nil || v.Modified || len(req.Topics) != 2 {
		t.Fatalf("audit mode changed the request: %+v", v)
	}
	enf.Close()
	var decisions []string
	for _, l := range logbuf.JSONLines[map[string]string](t, out) {
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
	if n := counterValue(enf.metrics.deny); n != 100 {
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

// TestThrottleAuditLine: a quota's throttle line, written by the
// enforcer's audit log beside its decisions and by the audit log of a
// cluster without an enforcer, names who was throttled, by which quota
// and for how long.
func TestThrottleAuditLine(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	throttle := quota.Throttle{
		Time: at, Quota: "payments", Kind: quota.Produce, Principal: "User:svc-payments", ClientID: "billing",
		Listener: "bootstrap", VirtualCluster: "team-a", Client: netip.MustParseAddr("10.1.2.3"),
		Throttle: 812400 * time.Microsecond, SampleRate: 0.25,
	}
	want := `{"time":"2026-12-01T10:00:00Z","principal":"User:svc-payments","client":"10.1.2.3","client_id":"billing",` +
		`"listener":"bootstrap","virtual_cluster":"team-a","decision":"throttle","quota":"payments","kind":"produce",` +
		`"throttle_ms":812.4,"sample_rate":0.25}` + "\n"

	enf, fromEnforcer := auditedEnforcer(t, "policy: {default: allow}")
	enf.AuditThrottle(throttle)
	enf.Close()
	if got := fromEnforcer.String(); got != want {
		t.Errorf("enforcer's throttle line:\n%s\nwant\n%s", got, want)
	}

	var alone logbuf.Buffer
	log, err := NewAuditLog(nil, WithAuditWriter(&alone))
	if err != nil {
		t.Fatal(err)
	}
	log.AuditThrottle(throttle)
	log.Close()
	if got := alone.String(); got != want {
		t.Errorf("audit log's throttle line:\n%s\nwant\n%s", got, want)
	}
	log.AuditThrottle(throttle) // after Close: dropped, not a panic
}

// TestAuditLogStartsWithItsFirstLine: an audit log that is never written
// to starts no writer, and closing it is immediate.
func TestAuditLogStartsWithItsFirstLine(t *testing.T) {
	log, err := NewAuditLog(nil, WithAuditWriter(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	if log.log.queue != nil {
		t.Error("the writer started before any line")
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	log.AuditThrottle(quota.Throttle{Quota: "q"})
	if log.log.queue != nil {
		t.Error("a line after Close started the writer")
	}
}
