package policy

import (
	"net/netip"
	"testing"
)

const enginePolicy = `
policy:
  default: deny
  rules:
    - name: payments-writers
      principals: ["User:svc-payments", "cidr:10.1.0.0/16"]
      allow: [write, describe]
      topics: ["payments.*"]
      transactional_ids: ["payments-*"]
    - name: analytics-readers
      principals: ["client_id:analytics-*"]
      allow: [read]
      topics: ["re:^events\\.(clicks|views)$"]
      groups: ["analytics-?"]
    - name: nobody-deletes
      principals: ["*"]
      deny: [delete]
      topics: ["*"]
    - name: admins
      principals: ["User:admin", "cn:ops.example.com", "listener:node-7"]
      allow: [all]
      topics: ["*"]
      groups: ["*"]
      cluster: true
    - name: no-secrets
      principals: ["User:admin"]
      deny: [read]
      topics: ["*.secret"]
    - name: idempotent
      principals: ["client_id:prod-*"]
      allow: [idempotent_write, alter_configs]
      cluster: true
`

func TestDecide(t *testing.T) {
	e := compilePolicy(t, enginePolicy)
	anon := Principal{User: Anonymous, Addr: netip.MustParseAddr("192.168.1.1"), Listener: "bootstrap"}
	with := func(f func(*Principal)) Principal { p := anon; f(&p); return p }
	payments := with(func(p *Principal) { p.User = "svc-payments" })
	inNet := with(func(p *Principal) { p.Addr = netip.MustParseAddr("10.1.200.3") })
	outNet := with(func(p *Principal) { p.Addr = netip.MustParseAddr("10.2.0.1") })
	analytics := with(func(p *Principal) { p.ClientID = "analytics-etl" })
	admin := with(func(p *Principal) { p.User = "admin" })
	opsCert := with(func(p *Principal) { p.CN = "ops.example.com" })
	node7 := with(func(p *Principal) { p.Listener = "node-7" })
	prod := with(func(p *Principal) { p.ClientID = "prod-orders" })

	tests := []struct {
		name     string
		p        Principal
		op       Operation
		rt       ResourceType
		resource string
		allowed  bool
		rule     string
	}{
		{"user matcher + prefix glob", payments, OpWrite, ResTopic, "payments.eu", true, "payments-writers"},
		{"glob does not match other prefix", payments, OpWrite, ResTopic, "paymentsX", false, DefaultRule},
		{"cidr matcher inside", inNet, OpWrite, ResTopic, "payments.us", true, "payments-writers"},
		{"cidr matcher outside", outNet, OpWrite, ResTopic, "payments.us", false, DefaultRule},
		{"op not granted", payments, OpRead, ResTopic, "payments.eu", false, DefaultRule},
		{"transactional id glob", payments, OpWrite, ResTransactionalID, "payments-tx1", true, "payments-writers"},
		{"client_id glob + regex topic", analytics, OpRead, ResTopic, "events.clicks", true, "analytics-readers"},
		{"regex is as written (anchored by ^$)", analytics, OpRead, ResTopic, "events.clicks.v2", false, DefaultRule},
		{"read implies describe", analytics, OpDescribe, ResTopic, "events.views", true, "analytics-readers"},
		{"? matches one char", analytics, OpRead, ResGroup, "analytics-1", true, "analytics-readers"},
		{"? does not match two", analytics, OpRead, ResGroup, "analytics-12", false, DefaultRule},
		{"read does not imply write", analytics, OpWrite, ResTopic, "events.clicks", false, DefaultRule},
		{"deny wins over all", admin, OpDelete, ResTopic, "anything", false, "nobody-deletes"},
		{"deny wins regardless of order", admin, OpRead, ResTopic, "db.secret", false, "no-secrets"},
		{"all allows the rest", admin, OpAlter, ResCluster, ClusterName, true, "admins"},
		{"cn matcher", opsCert, OpCreate, ResTopic, "x", true, "admins"},
		{"listener matcher", node7, OpDescribe, ResGroup, "g", true, "admins"},
		{"deny applies to everyone", payments, OpDelete, ResTopic, "payments.eu", false, "nobody-deletes"},
		{"alter_configs implies describe_configs", prod, OpDescribeConfigs, ResCluster, ClusterName, true, "idempotent"},
		{"cluster rule does not cover topics", prod, OpIdempotentWrite, ResTopic, "x", false, DefaultRule},
		{"anonymous gets the default", anon, OpDescribe, ResTopic, "payments.eu", false, DefaultRule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.Decide(tt.p, tt.op, tt.rt, tt.resource)
			if got.Allowed != tt.allowed || got.Rule != tt.rule {
				t.Errorf("Decide(%+v, %s, %s, %q) = %+v; want allowed=%v rule=%q", tt.p, tt.op, tt.rt, tt.resource, got, tt.allowed, tt.rule)
			}
		})
	}
}

func TestDefaultAllow(t *testing.T) {
	e := compilePolicy(t, `
policy:
  default: allow
  rules:
    - {name: no-delete, principals: ["*"], deny: [delete], topics: ["*"]}
`)
	p := Principal{User: Anonymous}
	if d := e.Decide(p, OpWrite, ResTopic, "t"); !d.Allowed || d.Rule != DefaultRule {
		t.Errorf("write = %+v, want allowed by default", d)
	}
	if d := e.Decide(p, OpDelete, ResTopic, "t"); d.Allowed || d.Rule != "no-delete" {
		t.Errorf("delete = %+v, want denied by no-delete", d)
	}
}

func TestDefaultIsDeny(t *testing.T) {
	e := compilePolicy(t, "policy: {rules: []}")
	if d := e.Decide(Principal{User: Anonymous}, OpDescribe, ResTopic, "t"); d.Allowed {
		t.Errorf("an empty policy without default allowed %+v", d)
	}
}

func TestDecideAny(t *testing.T) {
	e := compilePolicy(t, `
policy:
  rules:
    - {name: writers, principals: ["client_id:w"], allow: [write], topics: ["some.*"]}
    - {name: blocked, principals: ["client_id:blocked"], allow: [write], topics: ["some.*"]}
    - {name: block-all, principals: ["client_id:blocked"], deny: [write], topics: ["*"]}
    - {name: block-some, principals: ["client_id:w"], deny: [write], topics: ["some.x"]}
`)
	for _, tt := range []struct {
		client string
		want   bool
	}{{"w", true}, {"blocked", false}, {"other", false}} {
		p := Principal{User: Anonymous, ClientID: tt.client}
		s := e.subjectOf(&p)
		if got := s.DecideAny(OpWrite, ResTopic); got.Allowed != tt.want {
			t.Errorf("client %s: DecideAny(Write, Topic) = %+v, want %v", tt.client, got, tt.want)
		}
	}
}

// TestSubjectManyRules covers the allocated bitset (more than 256 rules).
func TestSubjectManyRules(t *testing.T) {
	yaml := "policy:\n  rules:\n"
	for i := 0; i < 300; i++ {
		yaml += "    - {name: r" + itoa(i) + ", principals: [\"client_id:c" + itoa(i) + "\"], allow: [read], topics: [\"t" + itoa(i) + "\"]}\n"
	}
	e := compilePolicy(t, yaml)
	p := Principal{User: Anonymous, ClientID: "c299"}
	s := e.subjectOf(&p)
	if s.RulesApplying() != 1 {
		t.Fatalf("rules applying = %d, want 1", s.RulesApplying())
	}
	if d := s.Decide(OpRead, ResTopic, "t299"); !d.Allowed || d.Rule != "r299" {
		t.Errorf("Decide = %+v", d)
	}
	if d := s.Decide(OpRead, ResTopic, "t298"); d.Allowed {
		t.Errorf("rule of another principal applied: %+v", d)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func TestGlobMatch(t *testing.T) {
	for _, tt := range []struct {
		glob, s string
		want    bool
	}{
		{"*", "", true}, {"*", "abc", true}, {"abc", "abc", true}, {"abc", "abd", false},
		{"a*", "a", true}, {"a*", "ba", false}, {"*c", "abc", true}, {"*c", "cb", false},
		{"a*c", "abbbc", true}, {"a*c", "abbbd", false}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"*.*.x", "a.b.x", true}, {"*.*.x", "a.x", false}, {"a**b", "ab", true},
		{"*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	} {
		if got := globMatch(tt.glob, tt.s); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tt.glob, tt.s, got, tt.want)
		}
		// The classified fast paths agree with the general matcher.
		ms, err := parseMatchers([]string{tt.glob})
		if err != nil {
			t.Fatal(err)
		}
		if got := ms[0].match(tt.s); got != tt.want {
			t.Errorf("matcher(%q).match(%q) = %v (kind %d), want %v", tt.glob, tt.s, got, ms[0].kind, tt.want)
		}
	}
}
