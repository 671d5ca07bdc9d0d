package policy

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/protocol"
)

// benchPolicy builds n rules the way a real policy mixes them: per-team
// client id and user principals, prefix globs, some regexes, some denies,
// and one everyone-may-describe rule.
func benchPolicy(n int) string {
	var b strings.Builder
	b.WriteString("policy:\n  rules:\n    - {name: describe-all, principals: [\"*\"], allow: [describe], topics: [\"*\"]}\n")
	for i := 1; i < n; i++ {
		switch {
		case i%10 == 0:
			fmt.Fprintf(&b, "    - {name: deny-%d, principals: [\"cidr:10.%d.0.0/16\"], deny: [write], topics: [\"re:^team%d\\\\.secret\"]}\n", i, i%250, i)
		case i%3 == 0:
			fmt.Fprintf(&b, "    - {name: readers-%d, principals: [\"User:reader-%d\", \"client_id:ro-%d-*\"], allow: [read], topics: [\"team%d.*\"], groups: [\"team%d-*\"]}\n", i, i, i, i, i)
		default:
			fmt.Fprintf(&b, "    - {name: writers-%d, principals: [\"client_id:svc-%d-*\", \"User:svc-%d\"], allow: [write], topics: [\"team%d.*\"], transactional_ids: [\"team%d-*\"]}\n", i, i, i, i, i)
		}
	}
	return b.String()
}

// BenchmarkDecide is one request's decisions: the principal's ruleSubject
// (built afresh, or from the per-policy cache requests use), then one
// Write decision per topic.
func BenchmarkDecide(b *testing.B) {
	for _, rules := range []int{10, 50, 200} {
		cfg := parsePolicy(b, benchPolicy(rules))
		st, err := compileState(cfg.Policy, nil)
		if err != nil {
			b.Fatal(err)
		}
		p := Principal{User: Anonymous, ClientID: "svc-7-orders", Addr: netip.MustParseAddr("10.7.1.2"), Listener: "node-0"}
		for _, topics := range []int{1, 100} {
			names := make([]string, topics)
			for i := range names {
				names[i] = fmt.Sprintf("team7.topic-%d", i)
			}
			for _, cached := range []bool{false, true} {
				b.Run(fmt.Sprintf("rules=%d/topics=%d/cached=%v", rules, topics, cached), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						var s *ruleSubject
						if cached {
							s = st.subject(&p)
						} else {
							fresh := st.engine.subjectOf(&p)
							s = &fresh
						}
						for _, n := range names {
							if !s.Decide(OpWrite, ResTopic, n).Allowed {
								b.Fatal("denied")
							}
						}
					}
				})
			}
		}
	}
}

// BenchmarkFilterProduce is the enforcer's whole cost for an allowed
// produce: principal, subject, governance lookup, decisions.
func BenchmarkFilterProduce(b *testing.B) {
	enf := newTestEnforcer(b, benchPolicy(50), nil)
	conn := *testConn
	conn.ClientID = "svc-7-orders"
	for _, topics := range []int{1, 100} {
		var specs []string
		for i := 0; i < topics; i++ {
			specs = append(specs, fmt.Sprintf("team7.t%d:0", i))
		}
		req := produceReq(9, -1, specs...)
		produce := handlersOf(enf)[kmsg.Produce.Int16()]
		b.Run(fmt.Sprintf("rules=50/topics=%d", topics), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if v := produce.Handle(&conn, req); v.Respond != nil || v.Modified {
					b.Fatal("denied")
				}
			}
		})
	}
	_ = kmsg.Produce
}

// BenchmarkEnforceProduceBody is an allowed produce from its body to the
// verdict, both ways the engine can take: decode with kmsg then the typed
// handler (every produce before filter.DecideRaw), and the raw decision on
// the body.
func BenchmarkEnforceProduceBody(b *testing.B) {
	enf := newTestEnforcer(b, benchPolicy(50), nil)
	produce := handlersOf(enf)[kmsg.Produce.Int16()]
	conn := *testConn
	conn.ClientID = "svc-7-orders"
	for _, shape := range []struct {
		name          string
		topics, parts int
	}{{"topics=1/partitions=5", 1, 5}, {"topics=100/partitions=1", 100, 1}} {
		var specs []string
		for i := 0; i < shape.topics; i++ {
			specs = append(specs, fmt.Sprintf("team7.t%d:%s", i, strings.Repeat("0", shape.parts)))
		}
		req := produceReq(9, -1, specs...)
		body := req.AppendTo(nil)
		b.Run(shape.name+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := protocol.DecodeRequest(kmsg.Produce.Int16(), 9, body)
				if err != nil {
					b.Fatal(err)
				}
				if v := produce.Handle(&conn, r); v.Respond != nil || v.Modified {
					b.Fatal("denied")
				}
			}
		})
		b.Run(shape.name+"/inspect", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if v, decided := produce.DecideRaw(&conn, 9, body); !decided || v.Respond != nil {
					b.Fatal("not decided")
				}
			}
		})
	}
}
