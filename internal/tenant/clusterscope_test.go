package tenant

import (
	"context"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestEveryKeyIsClassified walks every API key kmsg knows and fails on one
// that is in no class of a virtual cluster's: mapped (a table entry),
// refused (not for clients), cluster-scoped (the cluster operators' only)
// or the connection's own. A kmsg upgrade that adds a key fails here until
// someone decides which it is.
func TestEveryKeyIsClassified(t *testing.T) {
	tbl := buildTable()
	own := map[int16]bool{}
	for _, k := range connectionKeys() {
		own[k] = true
	}
	for key := int16(0); key <= kmsg.MaxKey; key++ {
		if kmsg.RequestForKey(key) == nil {
			continue
		}
		mapped, refused, scoped := tbl.lookup(key) != nil, tbl.isRefused(key), tbl.scopedFor(key) != nil
		switch {
		case !mapped && !refused && !scoped && !own[key]:
			t.Errorf("%s (%d) is in no class: map it (an entry), refuse it (refusedKeys), make it cluster-scoped (clusterScopedAPIs) or the connection's own (connectionKeys)", kmsg.NameForKey(key), key)
		case refused && (mapped || scoped || own[key]):
			t.Errorf("%s (%d) is refused and in another class", kmsg.NameForKey(key), key)
		case own[key] && (mapped || scoped):
			t.Errorf("%s (%d) is the connection's own and in another class", kmsg.NameForKey(key), key)
		}
	}
}

// TestClusterScopedAnsweredUnlessOperator: every cluster-scoped request,
// with every list filled, is answered by kproxy at every version with the
// API's authorization error, each entry of the request answered; a cluster
// operator's goes on (mapped where the key has an entry).
func TestClusterScopedAnsweredUnlessOperator(t *testing.T) {
	for _, s := range clusterScopedAPIs() {
		name := kmsg.NameForKey(s.key)
		for v := int16(0); v <= kmsg.RequestForKey(s.key).MaxVersion(); v++ {
			req := kmsg.RequestForKey(s.key)
			req.SetVersion(v)
			fillMessage("req", reflect.ValueOf(req), func(path string, _ nameKind, f reflect.Value) { setName(f, "x", markerID(path)) })
			m := New(markerNames)
			_, err := m.MapRequest(context.Background(), req)
			a, ok := AsAnswer(err)
			if !ok {
				t.Fatalf("%s v%d from a tenant: %v, want kproxy's answer", name, v, err)
			}
			a.Response.AppendTo(nil) // encodes at the request's version
			if codes := errorCodes(reflect.ValueOf(a.Response)); len(codes) == 0 && versionHasErrorCode(a.Response) {
				t.Errorf("%s v%d: answer carries no error code", name, v)
			} else {
				for _, c := range codes {
					if c != kerr.ClusterAuthorizationFailed.Code && c != kerr.DelegationTokenAuthorizationFailed.Code {
						t.Errorf("%s v%d: answer has error %d, want CLUSTER_AUTHORIZATION_FAILED (or DELEGATION_TOKEN_AUTHORIZATION_FAILED)", name, v, c)
					}
				}
			}
			if _, err := m.MapRequest(AsClusterOperator(context.Background()), req); err != nil {
				t.Errorf("%s v%d from a cluster operator: %v, want it forwarded", name, v, err)
			}
		}
	}
}

// versionHasErrorCode: DescribeLogDirs before v3 has no top-level error
// code (Kafka answers a principal without the ACL no directories).
func versionHasErrorCode(resp kmsg.Response) bool {
	return !(resp.Key() == int16(kmsg.DescribeLogDirs) && resp.GetVersion() < 3)
}

// errorCodes lists every non-zero ErrorCode field of v, at any depth.
func errorCodes(v reflect.Value) []int16 {
	var out []int16
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			out = errorCodes(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			out = append(out, errorCodes(v.Index(i))...)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Name == "ErrorCode" && v.Field(i).Kind() == reflect.Int16 {
				if c := int16(v.Field(i).Int()); c != 0 {
					out = append(out, c)
				}
				continue
			}
			if f.IsExported() {
				out = append(out, errorCodes(v.Field(i))...)
			}
		}
	}
	return out
}

// The SCRAM credentials of the finding: team-a listing and deleting
// team-b's user is answered CLUSTER_AUTHORIZATION_FAILED per user.
func TestAlterUserSCRAMCredentialsRefused(t *testing.T) {
	m := New(Names{Topic: "team-a."})
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	del := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	del.Name, del.Mechanism = "team-b-app", 1
	req.Deletions = append(req.Deletions, del, del)
	_, err := m.MapRequest(context.Background(), req)
	a, ok := AsAnswer(err)
	if !ok {
		t.Fatalf("deleting another tenant's SCRAM user: %v, want kproxy's answer", err)
	}
	resp := a.Response.(*kmsg.AlterUserSCRAMCredentialsResponse)
	if len(resp.Results) != 1 || resp.Results[0].User != "team-b-app" || resp.Results[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("results %+v, want team-b-app CLUSTER_AUTHORIZATION_FAILED once", resp.Results)
	}
}

// Broker configs are the cluster's: a tenant's describe or alter of one is
// answered per resource; its topic configs alone go on.
func TestConfigsOfTheClusterRefused(t *testing.T) {
	m := New(Names{Topic: "team-a."})
	for _, rt := range []kmsg.ConfigResourceType{kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger, kmsg.ConfigResourceTypeClientMetrics} {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		for _, r := range []struct {
			t    kmsg.ConfigResourceType
			name string
		}{{kmsg.ConfigResourceTypeTopic, "orders"}, {rt, ""}} {
			res := kmsg.NewIncrementalAlterConfigsRequestResource()
			res.ResourceType, res.ResourceName = r.t, r.name
			req.Resources = append(req.Resources, res)
		}
		_, err := m.MapRequest(context.Background(), req)
		a, ok := AsAnswer(err)
		if !ok {
			t.Fatalf("%v configs: %v, want kproxy's answer", rt, err)
		}
		got := a.Response.(*kmsg.IncrementalAlterConfigsResponse).Resources
		if len(got) != 2 || got[0].ResourceName != "orders" || got[0].ErrorCode != kerr.InvalidRequest.Code ||
			got[1].ResourceType != rt || got[1].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
			t.Fatalf("%v configs: answer %+v, want orders not run and the %v resource CLUSTER_AUTHORIZATION_FAILED", rt, got, rt)
		}
		if _, err := m.MapRequest(AsClusterOperator(context.Background()), req); err != nil || req.Resources[0].ResourceName != "team-a.orders" {
			t.Fatalf("%v configs from a cluster operator: %v, topic %q; want forwarded, mapped", rt, err, req.Resources[0].ResourceName)
		}
	}
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "orders"
	req.Resources = append(req.Resources, res)
	if _, err := m.MapRequest(context.Background(), req); err != nil || req.Resources[0].ResourceName != "team-a.orders" {
		t.Fatalf("a tenant's topic configs: %v, %q; want forwarded as team-a.orders", err, req.Resources[0].ResourceName)
	}
}
