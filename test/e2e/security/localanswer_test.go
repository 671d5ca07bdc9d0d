package e2esecurity

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// answerDescribeGroups answers every DescribeGroups request itself, with
// an error code the test can recognise: a local answer, which no upstream
// bytes will follow.
type answerDescribeGroups struct{}

const localAnswerCode = 16 // NOT_COORDINATOR: any code kfake would not give here

func (f answerDescribeGroups) Register(r *filter.Registry) { filter.OnRequest(r, f.describeGroups) }

func (answerDescribeGroups) describeGroups(_ *filter.Conn, r *kmsg.DescribeGroupsRequest) filter.Verdict {
	resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, g := range r.Groups {
		dg := kmsg.NewDescribeGroupsResponseGroup()
		dg.Group, dg.ErrorCode = g, localAnswerCode
		resp.Groups = append(resp.Groups, dg)
	}
	return filter.Verdict{Respond: resp}
}

// TestLocalAnswersBetweenUpstreamAnswers: while nothing is owed, kproxy's
// response loop waits on the upstream connection, and a response kproxy
// gives itself interrupts that wait with a read deadline. One connection
// alternates upstream and local answers (sometimes pausing so the loop is
// surely waiting); every answer must arrive, in order, and the upstream
// connection (plain TCP, and TLS with SASL, whose session must survive the
// interrupted reads) must keep serving without being replaced.
func TestLocalAnswersBetweenUpstreamAnswers(t *testing.T) {
	p := certs.New(t)
	for _, secure := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain-upstream", true: "tls-sasl-upstream"}[secure], func(t *testing.T) {
			var bootstrap []string
			upstream := ""
			if secure {
				bootstrap = secureUpstream(t, p).ListenAddrs()
				upstream = fmt.Sprintf(`
  tls: {ca_file: %s}
  sasl: {mechanism: SCRAM-SHA-256, username: kproxy-svc, password: upstream-secret}`, p.CAFile)
			} else {
				bootstrap = testkit.Cluster(t, 1).ListenAddrs()
			}
			px := kproxytest.Start(t, fmt.Sprintf(`
upstream:
  bootstrap_servers: [%q]%s
listeners: {bind_host: 127.0.0.1}
log: {level: warn}
`, bootstrap[0], upstream), kproxytest.WithFilters(answerDescribeGroups{}))
			c := dialRaw(t, px.BootstrapAddr())
			for i := range 60 {
				md := kmsg.NewPtrMetadataRequest()
				resp, err := c.RoundTrip(md)
				if err != nil {
					t.Fatalf("round %d: metadata: %v", i, err)
				}
				if len(resp.(*kmsg.MetadataResponse).Brokers) == 0 {
					t.Fatalf("round %d: metadata without brokers", i)
				}
				if i%2 == 0 {
					time.Sleep(2 * time.Millisecond) // the response loop is now waiting upstream
				}
				dg := kmsg.NewPtrDescribeGroupsRequest()
				dg.Groups = []string{fmt.Sprintf("g-%d", i)}
				resp, err = c.RoundTrip(dg)
				if err != nil {
					t.Fatalf("round %d: local answer: %v", i, err)
				}
				if got := resp.(*kmsg.DescribeGroupsResponse).Groups; len(got) != 1 || got[0].ErrorCode != localAnswerCode || got[0].Group != dg.Groups[0] {
					t.Fatalf("round %d: local answer %+v", i, got)
				}
			}
			if n := testkit.MetricValue(t, px.Registry, "kproxy_connections_closed_total"); n != 0 {
				t.Errorf("%v connections closed during the exchange", n)
			}
		})
	}
}
