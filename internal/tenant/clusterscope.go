package tenant

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Cluster-scoped APIs act on the upstream cluster as a whole, which every
// tenant of it shares: SCRAM credentials and client quotas (one user's or
// the default user's, whichever tenant it is), delegation tokens (owned by
// the principal kproxy logs in as, the same for every tenant), the
// brokers' own configs, features, brokers' registrations, and the placement
// and leadership of replicas on the shared brokers' disks. Kafka authorizes
// each on the CLUSTER resource (or, for delegation tokens, the token's
// owner), never on a topic or group a tenant owns. A tenant's client gets
// the answer Kafka's authorizer gives a principal without that ACL; the
// principals a virtual cluster names as its cluster_operators (the engine
// says so with AsClusterOperator) are let through, with names still mapped
// where the API carries any.

// clusterOperatorKey marks a context as the cluster operator's.
type clusterOperatorKey struct{}

// AsClusterOperator is ctx for a request of one of the virtual cluster's
// cluster operators: MapRequest lets its cluster-scoped requests through.
func AsClusterOperator(ctx context.Context) context.Context {
	return context.WithValue(ctx, clusterOperatorKey{}, true)
}

func isClusterOperator(ctx context.Context) bool {
	op, _ := ctx.Value(clusterOperatorKey{}).(bool)
	return op
}

// scopedAPI is a cluster-scoped key and Kafka's answer to a principal
// without the cluster-level ACL it needs: refuse builds it from the
// request (at the request's version), msg in every error message.
type scopedAPI struct {
	key    int16
	refuse func(req kmsg.Request, msg *string) kmsg.Response
}

// clusterScopedMessage is the error message of a refused cluster-scoped
// request or resource.
func clusterScopedMessage(what string) *string {
	return kmsg.StringPtr(fmt.Sprintf("kproxy: %s acts on the whole cluster, which this virtual cluster shares with others: only the virtual cluster's cluster_operators may use it", what))
}

// clusterScopedAPIs is every cluster-scoped key. Configs APIs are
// cluster-scoped per resource (configs.go), not here.
func clusterScopedAPIs() []scopedAPI {
	auth := kerr.ClusterAuthorizationFailed.Code
	return []scopedAPI{
		scoped(kmsg.DescribeClientQuotas, func(_ *kmsg.DescribeClientQuotasRequest, resp *kmsg.DescribeClientQuotasResponse, msg *string) {
			resp.ErrorCode, resp.ErrorMessage = auth, msg
		}),
		scoped(kmsg.AlterClientQuotas, func(req *kmsg.AlterClientQuotasRequest, resp *kmsg.AlterClientQuotasResponse, msg *string) {
			for _, e := range req.Entries {
				r := kmsg.NewAlterClientQuotasResponseEntry()
				r.ErrorCode, r.ErrorMessage = auth, msg
				for _, en := range e.Entity {
					re := kmsg.NewAlterClientQuotasResponseEntryEntity()
					re.Type, re.Name = en.Type, en.Name
					r.Entity = append(r.Entity, re)
				}
				resp.Entries = append(resp.Entries, r)
			}
		}),
		scoped(kmsg.DescribeUserSCRAMCredentials, func(_ *kmsg.DescribeUserSCRAMCredentialsRequest, resp *kmsg.DescribeUserSCRAMCredentialsResponse, msg *string) {
			resp.ErrorCode, resp.ErrorMessage = auth, msg
		}),
		scoped(kmsg.AlterUserSCRAMCredentials, func(req *kmsg.AlterUserSCRAMCredentialsRequest, resp *kmsg.AlterUserSCRAMCredentialsResponse, msg *string) {
			seen := map[string]bool{}
			add := func(user string) {
				if seen[user] {
					return
				}
				seen[user] = true
				r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
				r.User, r.ErrorCode, r.ErrorMessage = user, auth, msg
				resp.Results = append(resp.Results, r)
			}
			for _, d := range req.Deletions {
				add(d.Name)
			}
			for _, u := range req.Upsertions {
				add(u.Name)
			}
		}),
		scoped(kmsg.CreateDelegationToken, func(_ *kmsg.CreateDelegationTokenRequest, resp *kmsg.CreateDelegationTokenResponse, _ *string) {
			resp.ErrorCode = kerr.DelegationTokenAuthorizationFailed.Code
		}),
		scoped(kmsg.RenewDelegationToken, func(_ *kmsg.RenewDelegationTokenRequest, resp *kmsg.RenewDelegationTokenResponse, _ *string) {
			resp.ErrorCode = kerr.DelegationTokenAuthorizationFailed.Code
		}),
		scoped(kmsg.ExpireDelegationToken, func(_ *kmsg.ExpireDelegationTokenRequest, resp *kmsg.ExpireDelegationTokenResponse, _ *string) {
			resp.ErrorCode = kerr.DelegationTokenAuthorizationFailed.Code
		}),
		scoped(kmsg.DescribeDelegationToken, func(_ *kmsg.DescribeDelegationTokenRequest, resp *kmsg.DescribeDelegationTokenResponse, _ *string) {
			resp.ErrorCode = kerr.DelegationTokenAuthorizationFailed.Code
		}),
		scoped(kmsg.DescribeLogDirs, func(_ *kmsg.DescribeLogDirsRequest, resp *kmsg.DescribeLogDirsResponse, _ *string) {
			resp.ErrorCode = auth // v3+; before, Kafka answers no directories, as this does
		}),
		scoped(kmsg.ElectLeaders, func(req *kmsg.ElectLeadersRequest, resp *kmsg.ElectLeadersResponse, msg *string) {
			resp.ErrorCode = auth
			for _, t := range req.Topics {
				rt := kmsg.NewElectLeadersResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewElectLeadersResponseTopicPartition()
					rp.Partition, rp.ErrorCode, rp.ErrorMessage = p, auth, msg
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
		}),
		scoped(kmsg.AlterPartitionAssignments, func(req *kmsg.AlterPartitionAssignmentsRequest, resp *kmsg.AlterPartitionAssignmentsResponse, msg *string) {
			resp.ErrorCode, resp.ErrorMessage = auth, msg
			for _, t := range req.Topics {
				rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
					rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, auth, msg
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
		}),
		scoped(kmsg.ListPartitionReassignments, func(_ *kmsg.ListPartitionReassignmentsRequest, resp *kmsg.ListPartitionReassignmentsResponse, msg *string) {
			resp.ErrorCode, resp.ErrorMessage = auth, msg
		}),
		scoped(kmsg.UpdateFeatures, func(req *kmsg.UpdateFeaturesRequest, resp *kmsg.UpdateFeaturesResponse, msg *string) {
			resp.ErrorCode, resp.ErrorMessage = auth, msg
			for _, f := range req.FeatureUpdates {
				r := kmsg.NewUpdateFeaturesResponseResult()
				r.Feature, r.ErrorCode, r.ErrorMessage = f.Feature, auth, msg
				resp.Results = append(resp.Results, r)
			}
		}),
		scoped(kmsg.UnregisterBroker, func(_ *kmsg.UnregisterBrokerRequest, resp *kmsg.UnregisterBrokerResponse, msg *string) {
			resp.ErrorCode, resp.ErrorMessage = auth, msg
		}),
	}
}

// scoped is the scopedAPI of key k whose refusal fill writes into a fresh
// response.
func scoped[Req kmsg.Request, Resp kmsg.Response](k kmsg.Key, fill func(req Req, resp Resp, msg *string)) scopedAPI {
	return scopedAPI{key: int16(k), refuse: func(req kmsg.Request, msg *string) kmsg.Response {
		resp := req.ResponseKind().(Resp)
		resp.SetVersion(req.GetVersion())
		if r, ok := req.(Req); ok {
			fill(r, resp, msg)
		}
		return resp
	}}
}

// refuseClusterScoped is the Answer to req of a cluster-scoped key from
// someone who is not a cluster operator; nil otherwise.
func (m *Mapper) refuseClusterScoped(ctx context.Context, req kmsg.Request) error {
	s := m.table.scopedFor(req.Key())
	if s == nil || isClusterOperator(ctx) {
		return nil
	}
	return &Answer{Response: s.refuse(req, clusterScopedMessage(kmsg.NameForKey(req.Key())))}
}

// connectionKeys are the keys that concern the connection itself and
// carry no name and nothing of the cluster's: they pass as they are.
func connectionKeys() []int16 {
	return []int16{
		int16(kmsg.SASLHandshake), int16(kmsg.SASLAuthenticate),
		int16(kmsg.GetTelemetrySubscriptions), int16(kmsg.PushTelemetry),
	}
}
