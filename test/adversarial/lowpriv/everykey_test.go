package lowpriv

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/acl"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/policy"
	"github.com/kproxy/kproxy/protocol"
)

// TestLowPrivEveryAPIKey walks every API key kmsg knows. For each, the
// least-privileged principal sends, on a connection of its own, a request
// at the highest and at the lowest version kproxy advertises (kmsg's for a
// key the cluster does not serve: kproxy must decide it before it could
// reach the cluster) naming the topic, group and transactional id it may not touch,
// and the answer must be the one Kafka's authorizer gives, by the class
// the policy's table puts the key in:
//
//   - denied: an answer in the response's shape carrying the denied
//     resource's *_AUTHORIZATION_FAILED code (a topic it may not describe:
//     that, or the UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID Kafka hides
//     it behind), the same codes whether the named resources exist or not,
//     and the request never reaches the cluster (Metadata, which always
//     asks the cluster for its brokers, reaches it without the names);
//   - listing: answered without any resource it may not describe;
//   - closed: the connection closed (the response has no error field),
//     with a log line naming the API, and nothing forwarded;
//   - unchecked (Kafka checks no ACL) and setup (ApiVersions): passed.
//
// In every case no record, offset metadata, config value, member id,
// topic id or name the principal never sent appears in the answer's bytes.
// A key in no class fails the test: a key kmsg adds must be decided.
func TestLowPrivEveryAPIKey(t *testing.T) {
	e := startLowprivEnv(t)
	secret, ghost := e.secretNames(secretGroup), ghostNames("ghost-group")
	e.walkEveryKey(t, func(t *testing.T, rule policy.APIRule, version int16) {
		e.probeKey(t, rule, version, secret, ghost)
	})
}

// walkEveryKey runs probe as a subtest for every API key kmsg knows, at
// the highest and the lowest version kproxy advertises (kmsg's for a key
// the cluster does not serve), with the key's row of the policy's table.
// A key in no class of the table fails t.
func (e *lowprivEnv) walkEveryKey(t *testing.T, probe func(t *testing.T, rule policy.APIRule, version int16)) {
	rules := map[int16]policy.APIRule{}
	for _, r := range policy.APIRules() {
		rules[r.Key] = r
	}
	advertised, err := e.dial().APIVersions()
	if err != nil {
		t.Fatal(err)
	}
	versions := map[int16]kmsg.ApiVersionsResponseApiKey{}
	for _, k := range advertised.ApiKeys {
		versions[k.ApiKey] = k
	}
	for key := int16(0); key <= wire.MaxKnownKey(); key++ {
		if kmsg.RequestForKey(key) == nil {
			continue
		}
		name := protocol.APIName(key)
		rule, ok := rules[key]
		if !ok || rule.Class == 0 {
			t.Errorf("API key %d (%s) is in no class of the policy's table: decide whether kproxy authorizes it (and how a denial is answered), refuses it, or passes it as harmless", key, name)
			continue
		}
		lowest, highest := int16(0), kmsg.RequestForKey(key).MaxVersion()
		if v, ok := versions[key]; ok {
			lowest, highest = v.MinVersion, min(v.MaxVersion, highest)
		}
		for _, version := range slices.Compact([]int16{highest, lowest}) {
			t.Run(fmt.Sprintf("%02d-%s-v%d", key, name, version), func(t *testing.T) {
				if key == wire.SASLHandshakeKey || key == wire.SASLAuthenticateKey {
					t.Skip("the SASL exchange: every connection of this suite logs in with it")
				}
				probe(t, rule, version)
			})
		}
	}
}

// probeKey sends one key's probe, with the secret names and then with
// names that exist nowhere, and checks the answers by the key's class.
func (e *lowprivEnv) probeKey(t *testing.T, rule policy.APIRule, version int16, secret, ghost probeNames) {
	key, name := rule.Key, protocol.APIName(rule.Key)
	before, logMark := e.seen.count(key), e.log.mark()
	_, mark := e.seen.since(0)
	frame, resp, err := e.send(probeRequest(key, version, secret))
	forwarded := e.seen.count(key) > before

	if leaks := e.leaks(frame, rule.Class == policy.ClassListing); len(leaks) > 0 {
		t.Errorf("%s answer holds %v:\n%q", name, leaks, frame)
	}
	// A listing's names are filters (ListTransactions' pattern), which
	// reach the cluster; every other class must not carry them there.
	if rule.Class == policy.ClassDenied || rule.Class == policy.ClassClosed {
		upstream, _ := e.seen.since(mark)
		for _, req := range upstream {
			if leaks := e.leaksNamed(req); len(leaks) > 0 {
				t.Errorf("a request naming %v reached the cluster after the %s probe", leaks, name)
			}
		}
	}

	switch rule.Class {
	case policy.ClassSetup, policy.ClassUnchecked:
		// Passed as harmless: the cluster's own answer, or its close of
		// a key it does not serve, relayed.
		if err != nil && !forwarded {
			t.Errorf("%s (Kafka checks no ACL) was refused without reaching the cluster: %v", name, err)
		}
	case policy.ClassListing:
		if err != nil {
			t.Fatalf("%s: %v, want the listing without what the principal may not describe", name, err)
		}
	case policy.ClassClosed:
		if err == nil || errors.Is(err, testkit.ErrBadResponse) {
			t.Fatalf("%s: answered %v (%v), want the connection closed", name, resp, err)
		}
		if forwarded {
			t.Errorf("%s reached the cluster", name)
		}
		e.log.wait(t, logMark, "the close of "+name, func(l testkit.LogLine) bool {
			cause, _ := l["cause"].(string)
			return l.Message() == "connection closed" && strings.Contains(cause, name)
		})
	case policy.ClassDenied:
		if err != nil {
			t.Fatalf("%s: %v, want an answer denying it", name, err)
		}
		codes := errorCodes(resp)
		if r, ok := resp.(*kmsg.DescribeLogDirsResponse); ok && version < 3 {
			// Before v3 the response has no error code: Kafka answers an
			// unauthorized principal with no log dirs.
			if len(r.Dirs) != 0 {
				t.Errorf("DescribeLogDirs v%d answered %d log dirs, want none", version, len(r.Dirs))
			}
		} else if !slices.ContainsFunc(codes, func(c int16) bool { return slices.Contains(deniedCodes(rule.Resources), c) }) {
			t.Errorf("%s answered codes %v, want one of %v (%v denied)", name, codes, deniedCodes(rule.Resources), rule.Resources)
		}
		if forwarded && key != wire.MetadataKey {
			t.Errorf("%s reached the cluster although Kafka's authorizer answers it locally", name)
		}
		_, ghostResp, err := e.send(probeRequest(key, version, ghost))
		if err != nil {
			t.Fatalf("%s naming resources that do not exist: %v", name, err)
		}
		if ghostCodes := errorCodes(ghostResp); !slices.Equal(codes, ghostCodes) {
			t.Errorf("%s tells existing resources (codes %v) from missing ones (codes %v)", name, codes, ghostCodes)
		}
	default:
		t.Fatalf("%s: class %v unknown to this test", name, rule.Class)
	}
}

// send sends req on a new logged-in connection and reads its answer.
func (e *lowprivEnv) send(req kmsg.Request) ([]byte, kmsg.Response, error) {
	c := e.dial()
	defer c.Close()
	corr, err := c.Send(req)
	if err != nil {
		return nil, nil, err
	}
	return c.Receive(req, corr)
}

// leaksNamed names the secret resources a request to the cluster names.
func (e *lowprivEnv) leaksNamed(req []byte) []string {
	var found []string
	for what, s := range map[string][]byte{"topic": []byte(secretTopic), "group": []byte(secretGroup), "transactional id": []byte(secretTxn)} {
		if strings.Contains(string(req), string(s)) {
			found = append(found, what)
		}
	}
	return found
}

// deniedCodes are the codes Kafka's authorizer answers a principal
// without the permission on resources of the given types.
func deniedCodes(resources []acl.ResourceType) []int16 {
	var codes []int16
	for _, rt := range resources {
		codes = append(codes, int16(rt.DeniedCode()))
		if rt == acl.Topic {
			codes = append(codes, kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicID.Code)
		}
	}
	return codes
}
