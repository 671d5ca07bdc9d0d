package policy

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// handlersOf is the request handlers enf registers, by API key.
func handlersOf(enf *Enforcer) map[int16]filter.RequestHandler {
	var reg filter.Registry
	enf.Register(&reg)
	hs := make(map[int16]filter.RequestHandler, len(reg.Requests()))
	for _, h := range reg.Requests() {
		hs[h.Key] = h
	}
	return hs
}

// filterRequest passes req through the handler enf registered for its
// key, as the engine does with a decoded request; a key with none is
// forwarded, as the engine streams it.
func filterRequest(enf *Enforcer, conn *filter.Conn, req kmsg.Request) filter.Verdict {
	h, ok := handlersOf(enf)[req.Key()]
	if !ok {
		return filter.Verdict{}
	}
	return h.Handle(conn, req)
}

// auditedEnforcer is newTestEnforcer keeping its audit lines for the test
// to read.
func auditedEnforcer(t testing.TB, yaml string) (*Enforcer, *logbuf.Buffer) {
	t.Helper()
	var audit logbuf.Buffer
	return newTestEnforcer(t, yaml, &audit), &audit
}

// applyResponse runs v's response hook on resp, as the engine does when
// the upstream's response arrives, failing the test on its error.
func applyResponse(t testing.TB, v filter.Verdict, resp kmsg.Response) {
	t.Helper()
	if err := v.OnResponse(resp); err != nil {
		t.Fatal(err)
	}
}

// decideRaw asks enf's handler of key to decide a request from its raw
// body, as the engine does before decoding it.
func decideRaw(enf *Enforcer, conn *filter.Conn, key, version int16, body []byte) (filter.Verdict, bool) {
	h := handlersOf(enf)[key]
	if h.DecideRaw == nil {
		return filter.Verdict{}, false
	}
	return h.DecideRaw(conn, version, body)
}

// requestKeys is every API key enf registers a handler for.
func requestKeys(enf *Enforcer) []int16 {
	var keys []int16
	for key := range handlersOf(enf) {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

// parsePolicy parses a policy section (YAML under "policy:") through the
// real config loader, so tests see exactly what kproxy would.
func parsePolicy(t testing.TB, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader("upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\n" + yaml))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if cfg.Policy == nil {
		t.Fatal("no policy section")
	}
	return cfg
}

func compilePolicy(t testing.TB, yaml string) *ruleEngine {
	t.Helper()
	e, err := compileRules(*parsePolicy(t, yaml).Policy)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// topicConfigChanges is a v1 IncrementalAlterConfigs changing topic "t"'s
// configs.
func topicConfigChanges(changes ...kmsg.IncrementalAlterConfigsRequestResourceConfig) *kmsg.IncrementalAlterConfigsRequest {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.SetVersion(1)
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName, res.Configs = kmsg.ConfigResourceTypeTopic, "t", changes
	req.Resources = append(req.Resources, res)
	return req
}

// wantAllowed fails t unless v forwards the request when ok, or answers
// it when not.
func wantAllowed(t *testing.T, name string, v filter.Verdict, ok bool) {
	t.Helper()
	if got := v.Respond == nil; got != ok {
		t.Errorf("%s: allowed = %v, want %v", name, got, ok)
	}
}
