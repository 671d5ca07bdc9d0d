package tenant

import (
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// wholeMatch matches like the broker: RE2(J), the whole name.
func wholeMatch(t testing.TB, re, name string) bool {
	t.Helper()
	c, err := regexp.Compile(`^(?:` + re + `)$`)
	if err != nil {
		t.Fatalf("upstream regex %q does not compile: %v", re, err)
	}
	return c.MatchString(name)
}

var regexCandidates = []string{
	"team-a.orders", "team-a.payments", "team-b.orders", "team-b.secret", "orders",
	"__consumer_offsets", "team-a", "team-aX", "team-a.", "xteam-a.orders",
}

func TestRegexSubscriptionConfinedToTenant(t *testing.T) {
	const prefix = "team-a."
	for _, tc := range []struct {
		re   string
		want []string // tenant names it must match
	}{
		{"orders", []string{"team-a.orders"}},
		{".*", []string{"team-a.orders", "team-a.payments"}},
		{"orders|payments", []string{"team-a.orders", "team-a.payments"}},
		{"team-b\\..*", nil},
		{"(?s).*", []string{"team-a.orders", "team-a.payments"}},
		{"^team-b\\.orders$", nil},
		{"^.*$", []string{"team-a.orders", "team-a.payments"}}, // the tenant's names start after the prefix
		{"^orders$", []string{"team-a.orders"}},
		{"\\A(orders|^payments)", []string{"team-a.orders", "team-a.payments"}},
		{"(?m)^team-b.*", nil},
		{"orders^", nil}, // an anchor elsewhere matches nothing, as on its own
		{"x|^", nil},
		{"\\Qorders\\E", []string{"team-a.orders"}},
		{"\\Q)|(.*", nil},
		{"(?i)ORDERS", []string{"team-a.orders"}},
		{"[^z]*", []string{"team-a.orders", "team-a.payments"}},
		{"|.*", []string{"team-a.orders", "team-a.payments"}},
		{"(?:)|team-b.orders", nil},
	} {
		up, err := upRegex(prefix, tc.re)
		if err != nil {
			t.Errorf("%q refused: %v", tc.re, err)
			continue
		}
		for _, name := range regexCandidates {
			matched := wholeMatch(t, up, name)
			if matched && !strings.HasPrefix(name, prefix) {
				t.Errorf("%q (upstream %q) matches %q, not the tenant's", tc.re, up, name)
			}
			if want := contains(tc.want, name); matched != want && strings.HasPrefix(name, prefix) && len(name) > len(prefix) {
				t.Errorf("%q (upstream %q) matches %q: %v, want %v", tc.re, up, name, matched, want)
			}
		}
		if down, ok := downRegex(prefix, up); !ok || wholeMatch(t, down, "orders") != wholeMatch(t, up, prefix+"orders") {
			t.Errorf("%q: upstream %q shown back as %q (%v)", tc.re, up, down, ok)
		}
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func TestRegexEscapesRefused(t *testing.T) {
	for _, re := range []string{")|(.*", ".*)|(?:.*", "orders)|team-b\\.(.*", "(", "a)", "[", "\\E)|(.*", "(?P<x>", "x{2,1001}"} {
		if up, err := upRegex("team-a.", re); err == nil {
			t.Errorf("%q accepted as %q", re, up)
		}
	}
}

func TestConsumerGroupHeartbeatRegexAndNames(t *testing.T) {
	m := New(teamANames)
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	r.Version, r.Group, r.SubscribedTopicNames = 1, "app", []string{"orders"}
	r.SubscribedTopicRegex = kmsg.StringPtr("ord.*")
	up, a := upReq(t, m, r)
	if a != nil {
		t.Fatal("answered")
	}
	if up.Group != "team-a.app" || up.SubscribedTopicNames[0] != "team-a.orders" || *up.SubscribedTopicRegex != `team-a\.(?:(?-s:ord.*))` {
		t.Fatalf("upstream %q %q %q", up.Group, up.SubscribedTopicNames, *up.SubscribedTopicRegex)
	}

	hostile := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hostile.Version, hostile.Group, hostile.SubscribedTopicRegex = 1, "app", kmsg.StringPtr(").*|(.*")
	_, a = upReq(t, m, hostile)
	if resp := answered[*kmsg.ConsumerGroupHeartbeatResponse](t, a); resp.ErrorCode != kerr.InvalidRegularExpression.Code {
		t.Fatalf("hostile regex answered %+v", resp)
	}

	d := kmsg.NewPtrConsumerGroupDescribeRequest()
	d.Groups = []string{"app"}
	upD, _ := upReq(t, m, d)
	if upD.Groups[0] != "team-a.app" {
		t.Fatalf("describe upstream %q", upD.Groups)
	}
	resp := kmsg.NewPtrConsumerGroupDescribeResponse()
	g := kmsg.NewConsumerGroupDescribeResponseGroup()
	g.Group = "team-a.app"
	mb := kmsg.NewConsumerGroupDescribeResponseGroupMember()
	mb.SubscribedTopics = []string{"team-a.orders", "team-b.orders"}
	mb.SubscribedTopicRegex = up.SubscribedTopicRegex
	mb.Assignment.TopicPartitions = []kmsg.AssignmentTopicPartition{{Topic: "team-a.orders", TopicID: [16]byte{1}}, {Topic: "team-b.orders", TopicID: [16]byte{2}}}
	mb.TargetAssignment.TopicPartitions = []kmsg.AssignmentTopicPartition{{Topic: "team-b.orders", TopicID: [16]byte{2}}}
	g.Members = []kmsg.ConsumerGroupDescribeResponseGroupMember{mb}
	foreign := kmsg.NewConsumerGroupDescribeResponseGroup()
	foreign.Group = "team-b.app"
	resp.Groups = []kmsg.ConsumerGroupDescribeResponseGroup{g, foreign}
	got := downResp(t, m, upD, resp)
	if len(got.Groups) != 1 || got.Groups[0].Group != "app" {
		t.Fatalf("groups down %+v", got.Groups)
	}
	gm := got.Groups[0].Members[0]
	if len(gm.SubscribedTopics) != 1 || gm.SubscribedTopics[0] != "orders" || *gm.SubscribedTopicRegex != "(?-s:ord.*)" ||
		len(gm.Assignment.TopicPartitions) != 1 || gm.Assignment.TopicPartitions[0].Topic != "orders" || len(gm.TargetAssignment.TopicPartitions) != 0 {
		t.Fatalf("member down %+v", gm)
	}
}

// FuzzUpRegex: whatever regex a client sends, what goes upstream matches
// no name outside the tenant's prefix.
func FuzzUpRegex(f *testing.F) {
	for _, s := range []string{".*", ")|(.*", "\\Q)|(\\E", "(?m)^x$", "a|b", "[)|(]", "(?i)TEAM-B.*", "\\z|.*", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, re string) {
		up, err := upRegex("team-a.", re)
		if err != nil {
			return
		}
		if _, ok := downRegex("team-a.", up); !ok {
			t.Fatalf("%q: upstream %q not recognised back", re, up)
		}
		for _, name := range append(regexCandidates, "team-b."+re, re) {
			if wholeMatch(t, up, name) && !strings.HasPrefix(name, "team-a.") {
				t.Fatalf("%q (upstream %q) matches %q", re, up, name)
			}
		}
	})
}
