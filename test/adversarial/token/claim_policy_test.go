package token

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/idp"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// TestClaimPolicyReadsExactNames: a policy grants the topic payments.orders
// to claim:groups=payments. A token holder whose signed token says
// "Groups":["payments"] (a different claim: names are case-sensitive) logs
// in but is not granted, as Kafka's authorizer would see no such group:
// Metadata for the topic answers TOPIC_AUTHORIZATION_FAILED. With
// "groups":["payments"] it is granted; with groups given twice
// (["dev"] then ["payments"]) the token is refused at login.
func TestClaimPolicyReadsExactNames(t *testing.T) {
	const topic = "payments.orders"
	provider := idp.StartTest(t, idp.Options{Audience: "kafka"})
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, topic))
	kp := advkit.Start(t, oauthConfig(cluster.ListenAddrs()[0], testkit.TerminateOAuthBearer(provider.JWKSURL(), provider.Issuer()), `
policy:
  default: deny
  rules:
    - {name: payments-team, principals: ["claim:groups=payments"], allow: [describe, read, write], topics: ["payments.*"]}
`))
	payload := func(groups string) string {
		return fmt.Sprintf(`{"iss":%q,"aud":"kafka","sub":"mallory","exp":%d,%s}`, provider.Issuer(), time.Now().Add(time.Hour).Unix(), groups)
	}
	topicError := func(t *testing.T, claims string) int16 {
		t.Helper()
		login := oauthLogin(t, kp.Bootstrap, provider.MintRaw(claims))
		if login.ErrorCode != 0 || login.Challenge != "" {
			t.Fatalf("login: challenge %q, %v", login.Challenge, kerr.ErrorForCode(login.ErrorCode))
		}
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(12)
		req.AllowAutoTopicCreation = false // asks Describe only, not Create
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, mt)
		md := login.conn.MustRoundTrip(t, req).(*kmsg.MetadataResponse)
		if len(md.Topics) != 1 {
			t.Fatalf("metadata for %s: %d topics", topic, len(md.Topics))
		}
		return md.Topics[0].ErrorCode
	}
	if code := topicError(t, payload(`"Groups":["payments"]`)); code != kerr.TopicAuthorizationFailed.Code {
		t.Errorf(`"Groups":["payments"]: metadata for %s answered %v, want TOPIC_AUTHORIZATION_FAILED`, topic, kerr.ErrorForCode(code))
	}
	if code := topicError(t, payload(`"groups":["payments"]`)); code != 0 {
		t.Errorf(`"groups":["payments"]: metadata for %s answered %v, want it granted`, topic, kerr.ErrorForCode(code))
	}
	dup := oauthLogin(t, kp.Bootstrap, provider.MintRaw(payload(`"groups":["dev"],"groups":["payments"]`)))
	if dup.Challenge != `{"status":"invalid_token"}` || dup.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Errorf("groups given twice: challenge %q then %v, want the invalid_token challenge then SASL_AUTHENTICATION_FAILED", dup.Challenge, kerr.ErrorForCode(dup.ErrorCode))
	}
}
