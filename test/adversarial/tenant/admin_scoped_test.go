package tenant

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// team-a lists and deletes team-b's SCRAM user: Kafka's authorizer answers
// a principal without ALTER/DESCRIBE on the cluster CLUSTER_AUTHORIZATION_FAILED,
// and so does kproxy, for everyone but team-a's cluster operator; the
// upstream never sees the tenant's requests and team-b's user survives.
func TestAdminTenantCannotReachAnotherTenantsSCRAMUser(t *testing.T) {
	e := newAdminEnv(t)
	up := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	ups := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	ups.Name, ups.Mechanism, ups.Iterations = "team-b-app", 1, 4096
	ups.Salt, ups.SaltedPassword = []byte("salt-of-team-b"), make([]byte, 32)
	up.Upsertions = append(up.Upsertions, ups)
	if r := e.ask(up).(*kmsg.AlterUserSCRAMCredentialsResponse); len(r.Results) != 1 || r.Results[0].ErrorCode != 0 {
		t.Fatalf("creating team-b-app upstream: %+v", r.Results)
	}
	e.watch(kmsg.DescribeUserSCRAMCredentials, kmsg.AlterUserSCRAMCredentials)

	alice := e.dialAs("team-a", "alice")
	describe := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest() // null users: every user
	d := alice.MustRoundTrip(t, describe).(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if d.ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(d.Results) != 0 {
		t.Errorf("tenant's DescribeUserScramCredentials: error %d, results %+v; want CLUSTER_AUTHORIZATION_FAILED and no user", d.ErrorCode, d.Results)
	}
	del := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	dl := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	dl.Name, dl.Mechanism = "team-b-app", 1
	del.Deletions = append(del.Deletions, dl)
	a := alice.MustRoundTrip(t, del).(*kmsg.AlterUserSCRAMCredentialsResponse)
	if len(a.Results) != 1 || a.Results[0].User != "team-b-app" || a.Results[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("tenant's deletion of team-b-app: %+v, want team-b-app CLUSTER_AUTHORIZATION_FAILED", a.Results)
	}
	if n, m := e.received(kmsg.DescribeUserSCRAMCredentials), e.received(kmsg.AlterUserSCRAMCredentials); n+m != 0 {
		t.Errorf("the upstream received %d describe and %d alter SCRAM requests from the tenant, want none", n, m)
	}

	// team-a's cluster operator is let through, and sees the cluster's users.
	ops := e.dialAs("team-a", "ops-a")
	od := ops.MustRoundTrip(t, kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()).(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if od.ErrorCode != 0 || !slices.ContainsFunc(od.Results, func(r kmsg.DescribeUserSCRAMCredentialsResponseResult) bool { return r.User == "team-b-app" }) {
		t.Errorf("cluster operator's describe: error %d, results %+v; want the cluster's users", od.ErrorCode, od.Results)
	}
	if e.received(kmsg.DescribeUserSCRAMCredentials) != 1 {
		t.Errorf("the cluster operator's describe reached the upstream %d times, want once", e.received(kmsg.DescribeUserSCRAMCredentials))
	}
	check := e.ask(kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()).(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if !slices.ContainsFunc(check.Results, func(r kmsg.DescribeUserSCRAMCredentialsResponseResult) bool { return r.User == "team-b-app" }) {
		t.Errorf("team-b-app is gone from the upstream: %+v", check.Results)
	}
}

// team-a sets a quota on the default user, which would bind every tenant:
// refused per entry, and nothing reaches the upstream.
func TestAdminTenantCannotSetClientQuotas(t *testing.T) {
	e := newAdminEnv(t)
	e.watch(kmsg.DescribeClientQuotas, kmsg.AlterClientQuotas)
	alice := e.dialAs("team-a", "alice")

	alter := kmsg.NewPtrAlterClientQuotasRequest()
	entry := kmsg.NewAlterClientQuotasRequestEntry()
	entity := kmsg.NewAlterClientQuotasRequestEntryEntity()
	entity.Type = "user" // Name null: the default user, everyone
	entry.Entity = append(entry.Entity, entity)
	op := kmsg.NewAlterClientQuotasRequestEntryOp()
	op.Key, op.Value = "producer_byte_rate", 1
	entry.Ops = append(entry.Ops, op)
	alter.Entries = append(alter.Entries, entry)
	r := alice.MustRoundTrip(t, alter).(*kmsg.AlterClientQuotasResponse)
	if len(r.Entries) != 1 || r.Entries[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code ||
		len(r.Entries[0].Entity) != 1 || r.Entries[0].Entity[0].Type != "user" || r.Entries[0].Entity[0].Name != nil {
		t.Errorf("tenant's default-user quota: %+v, want the entry echoed with CLUSTER_AUTHORIZATION_FAILED", r.Entries)
	}
	describe := kmsg.NewPtrDescribeClientQuotasRequest()
	comp := kmsg.NewDescribeClientQuotasRequestComponent()
	comp.EntityType, comp.MatchType = "user", 2 // any user
	describe.Components = append(describe.Components, comp)
	if d := alice.MustRoundTrip(t, describe).(*kmsg.DescribeClientQuotasResponse); d.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("tenant's DescribeClientQuotas: error %d, want CLUSTER_AUTHORIZATION_FAILED", d.ErrorCode)
	}
	if n, m := e.received(kmsg.DescribeClientQuotas), e.received(kmsg.AlterClientQuotas); n+m != 0 {
		t.Errorf("the upstream received %d describe and %d alter quota requests from the tenant, want none", n, m)
	}
	if q := e.ask(describe).(*kmsg.DescribeClientQuotasResponse); q.ErrorCode != 0 || len(q.Entries) != 0 {
		t.Errorf("upstream quotas after the attack: error %d, %+v; want none", q.ErrorCode, q.Entries)
	}
}

// The brokers' own configs are the cluster's: a tenant's describe or alter
// of a BROKER or BROKER_LOGGER resource is answered per resource with
// CLUSTER_AUTHORIZATION_FAILED; its own topic's configs still work; the
// cluster operator describes the broker's.
func TestAdminTenantCannotTouchBrokerConfigs(t *testing.T) {
	e := newAdminEnv(t)
	e.createTopic("team-a.orders") // the tenant's orders
	alice := e.dialAs("team-a", "alice")
	e.watch(kmsg.DescribeConfigs, kmsg.AlterConfigs, kmsg.IncrementalAlterConfigs)

	for _, rt := range []kmsg.ConfigResourceType{kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger} {
		alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = rt, "0"
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		cfg.Name, cfg.Value = "log.retention.ms", kmsg.StringPtr("1")
		res.Configs = append(res.Configs, cfg)
		alter.Resources = append(alter.Resources, res)
		r := alice.MustRoundTrip(t, alter).(*kmsg.IncrementalAlterConfigsResponse)
		if len(r.Resources) != 1 || r.Resources[0].ResourceType != rt || r.Resources[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
			t.Errorf("tenant's alter of %v configs: %+v, want CLUSTER_AUTHORIZATION_FAILED", rt, r.Resources)
		}
	}
	describe := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
	describe.Resources = append(describe.Resources, dr)
	if r := alice.MustRoundTrip(t, describe).(*kmsg.DescribeConfigsResponse); len(r.Resources) != 1 || r.Resources[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(r.Resources[0].Configs) != 0 {
		t.Errorf("tenant's describe of broker 1's configs: %+v, want CLUSTER_AUTHORIZATION_FAILED", r.Resources)
	}
	for _, k := range []kmsg.Key{kmsg.DescribeConfigs, kmsg.AlterConfigs, kmsg.IncrementalAlterConfigs} {
		if n := e.received(k); n != 0 {
			t.Errorf("the upstream received %d %s requests from the tenant, want none", n, kmsg.NameForKey(int16(k)))
		}
	}

	own := kmsg.NewPtrDescribeConfigsRequest()
	or := kmsg.NewDescribeConfigsRequestResource()
	or.ResourceType, or.ResourceName = kmsg.ConfigResourceTypeTopic, "orders"
	own.Resources = append(own.Resources, or)
	if r := alice.MustRoundTrip(t, own).(*kmsg.DescribeConfigsResponse); len(r.Resources) != 1 || r.Resources[0].ErrorCode != 0 || r.Resources[0].ResourceName != "orders" {
		t.Errorf("tenant's describe of its own topic: %+v, want orders' configs", r.Resources)
	}
	ops := e.dialAs("team-a", "ops-a")
	dr.ResourceName = "" // the brokers' dynamic defaults: any broker answers
	describe.Resources = []kmsg.DescribeConfigsRequestResource{dr}
	if r := ops.MustRoundTrip(t, describe).(*kmsg.DescribeConfigsResponse); len(r.Resources) != 1 || r.Resources[0].ErrorCode != 0 {
		t.Errorf("cluster operator's describe of the brokers' configs: %+v, want them", r.Resources)
	}
	if n := e.received(kmsg.DescribeConfigs); n != 2 {
		t.Errorf("the upstream received %d DescribeConfigs, want 2 (the tenant's of its topic, the operator's)", n)
	}
}

// The other APIs acting on the whole cluster: each answered with its
// authorization error, none forwarded.
func TestAdminTenantClusterWideAPIsRefused(t *testing.T) {
	e := newAdminEnv(t)
	keys := []kmsg.Key{kmsg.ElectLeaders, kmsg.AlterPartitionAssignments, kmsg.ListPartitionReassignments,
		kmsg.DescribeLogDirs, kmsg.UpdateFeatures, kmsg.UnregisterBroker, kmsg.CreateDelegationToken, kmsg.DescribeDelegationToken}
	e.watch(keys...)
	alice := e.dialAs("team-a", "alice")

	elect := kmsg.NewPtrElectLeadersRequest()
	elect.SetVersion(2)
	et := kmsg.NewElectLeadersRequestTopic()
	et.Topic, et.Partitions = "orders", []int32{0}
	elect.Topics = append(elect.Topics, et)
	reassign := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = "orders"
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Replicas = []int32{0, 1, 2}
	rt.Partitions = append(rt.Partitions, rp)
	reassign.Topics = append(reassign.Topics, rt)
	logDirs := kmsg.NewPtrDescribeLogDirsRequest()
	logDirs.SetVersion(4)
	features := kmsg.NewPtrUpdateFeaturesRequest()
	fu := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	fu.Feature, fu.MaxVersionLevel = "metadata.version", 1
	features.FeatureUpdates = append(features.FeatureUpdates, fu)
	unregister := kmsg.NewPtrUnregisterBrokerRequest()
	unregister.BrokerID = 2

	for _, req := range []kmsg.Request{elect, reassign, kmsg.NewPtrListPartitionReassignmentsRequest(), logDirs, features, unregister,
		kmsg.NewPtrCreateDelegationTokenRequest(), kmsg.NewPtrDescribeDelegationTokenRequest()} {
		name := kmsg.NameForKey(req.Key())
		resp := alice.MustRoundTrip(t, req)
		codes := adminErrorCodes(reflect.ValueOf(resp))
		if len(codes) == 0 {
			t.Errorf("tenant's %s: answered without an error", name)
		}
		for _, c := range codes {
			if c != kerr.ClusterAuthorizationFailed.Code && c != kerr.DelegationTokenAuthorizationFailed.Code {
				t.Errorf("tenant's %s: error %v, want CLUSTER_AUTHORIZATION_FAILED (DELEGATION_TOKEN_AUTHORIZATION_FAILED for tokens)", name, kerr.ErrorForCode(c))
			}
		}
	}
	for _, k := range keys {
		if n := e.received(k); n != 0 {
			t.Errorf("the upstream received %d %s requests from the tenant, want none", n, kmsg.NameForKey(int16(k)))
		}
	}
}

// Envelope is broker-to-controller only and wraps a request under a
// principal of the sender's choosing: kproxy closes the connection (as
// Kafka closes a client connection that sends one), logs why, forwards
// nothing, and the tenant's other connections go on.
func TestAdminEnvelopeClosesTheConnection(t *testing.T) {
	e := newAdminEnv(t)
	e.watch(kmsg.Envelope)
	other := e.dialAs("team-a", "alice")
	attacker := e.dialAs("team-a", "alice")
	env := kmsg.NewPtrEnvelopeRequest()
	inner := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	env.RequestData = inner.AppendTo(nil)
	env.RequestPrincipal = []byte("User:admin")
	_, err := attacker.RoundTrip(env)
	if err == nil || errors.Is(err, testkit.ErrBadResponse) {
		t.Fatalf("Envelope: %v, want the connection closed", err)
	}
	e.kproxy.WaitLog("the close of the Envelope connection", func(l testkit.LogLine) bool {
		cause, _ := l["cause"].(string)
		return l.Message() == "connection closed" && strings.Contains(cause, "Envelope")
	})
	if n := e.received(kmsg.Envelope); n != 0 {
		t.Errorf("the upstream received %d Envelope requests, want none", n)
	}
	if r := other.MustRoundTrip(t, kmsg.NewPtrMetadataRequest()).(*kmsg.MetadataResponse); len(r.Brokers) != 3 {
		t.Errorf("the tenant's other connection: metadata with %d brokers, want 3", len(r.Brokers))
	}
}

// adminErrorCodes lists every non-zero ErrorCode field of v, at any depth.
func adminErrorCodes(v reflect.Value) []int16 {
	var out []int16
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			out = adminErrorCodes(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			out = append(out, adminErrorCodes(v.Index(i))...)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			switch {
			case f.Name == "ErrorCode" && v.Field(i).Kind() == reflect.Int16:
				if c := int16(v.Field(i).Int()); c != 0 {
					out = append(out, c)
				}
			case f.IsExported():
				out = append(out, adminErrorCodes(v.Field(i))...)
			}
		}
	}
	return out
}
