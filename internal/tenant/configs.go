package tenant

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config resources name a topic or a group by ResourceName, per
// ResourceType: those get the tenant's prefixes. Broker, broker logger and
// client metrics resources are the whole cluster's (clusterscope.go): for
// anyone but the virtual cluster's cluster operators a request naming one
// is answered by kproxy, that resource with CLUSTER_AUTHORIZATION_FAILED
// as Kafka's authorizer answers a principal without the cluster's
// DESCRIBE_CONFIGS or ALTER_CONFIGS, the others saying they were not run.
// Describing them is refused too: the brokers' settings (listeners, log
// directories, quotas, the operator's defaults) are the platform's, not
// the tenant's, and Kafka's clients ask for a broker's configs in a
// request of their own, so a tenant's topic configs are not caught up in it.

// isTenantResource reports whether a config resource of type t is a
// tenant's (a topic or a group), not the cluster's.
func isTenantResource(t kmsg.ConfigResourceType) bool {
	return t == kmsg.ConfigResourceTypeTopic || t == kmsg.ConfigResourceTypeGroupConfig
}

// upResource is the upstream name of a config resource of type t.
func (m *Mapper) upResource(t kmsg.ConfigResourceType, name string) string {
	switch t {
	case kmsg.ConfigResourceTypeTopic:
		return m.UpTopic(name)
	case kmsg.ConfigResourceTypeGroupConfig:
		return m.UpGroup(name)
	}
	return name
}

// downResource is the tenant's name of a config resource of type t; false
// when it is not the tenant's.
func (m *Mapper) downResource(t kmsg.ConfigResourceType, name string) (string, bool) {
	switch t {
	case kmsg.ConfigResourceTypeTopic:
		return m.DownTopic(name)
	case kmsg.ConfigResourceTypeGroupConfig:
		return m.DownGroup(name)
	}
	return name, true
}

// downResources maps the resources of a configs response back, dropping
// what is not the tenant's and stripping prefixes from error messages.
func downResources[T any](m *Mapper, rs []T, ref func(*T) (kmsg.ConfigResourceType, *string, *string)) []T {
	kept := rs[:0]
	for i := range rs {
		t, name, msg := ref(&rs[i])
		down, ok := m.downResource(t, *name)
		if !ok {
			continue
		}
		*name = down
		m.DownMessage(msg)
		kept = append(kept, rs[i])
	}
	clear(rs[len(kept):])
	return kept
}

// configsAPI is the entry of a configs API whose requests list resources
// (reqResources, each's type and name) and whose responses answer per
// resource (respResources: type, name, error message; respAdd appends
// one to kproxy's own answer).
func configsAPI[Req kmsg.Request, Resp kmsg.Response, RR, PR any](k kmsg.Key,
	reqResources func(Req) []RR, reqRef func(*RR) (kmsg.ConfigResourceType, *string),
	respResources func(Resp) *[]PR, respRef func(*PR) (kmsg.ConfigResourceType, *string, *string),
	respAdd func(resp Resp, t kmsg.ConfigResourceType, name string, code int16, msg *string),
) api {
	return api{
		key: key(k),
		request: typedRequest(func(ctx context.Context, m *Mapper, r Req) (bool, error) {
			rs := reqResources(r)
			if err := refuseClusterResources(ctx, r, rs, reqRef, respAdd); err != nil {
				return false, err
			}
			for i := range rs {
				t, name := reqRef(&rs[i])
				*name = m.upResource(t, *name)
			}
			return false, nil
		}),
		response: typedResponse(func(m *Mapper, r Resp) error {
			rs := respResources(r)
			*rs = downResources(m, *rs, respRef)
			return nil
		}),
		fields: []string{"req.Resources.ResourceName", "resp.Resources.ResourceName"},
	}
}

// refuseClusterResources is kproxy's answer to a configs request r naming
// a resource of the cluster's (isTenantResource false) from someone who is
// not a cluster operator; nil when there is none or the sender is one.
func refuseClusterResources[Req kmsg.Request, Resp kmsg.Response, RR any](ctx context.Context, r Req, rs []RR,
	ref func(*RR) (kmsg.ConfigResourceType, *string),
	add func(resp Resp, t kmsg.ConfigResourceType, name string, code int16, msg *string),
) error {
	if isClusterOperator(ctx) {
		return nil
	}
	refused := false
	for i := range rs {
		t, _ := ref(&rs[i])
		refused = refused || !isTenantResource(t)
	}
	if !refused {
		return nil
	}
	resp := r.ResponseKind().(Resp)
	resp.SetVersion(r.GetVersion())
	for i := range rs {
		t, name := ref(&rs[i])
		if isTenantResource(t) {
			add(resp, t, *name, kerr.InvalidRequest.Code, kmsg.StringPtr(msgNotRun))
			continue
		}
		add(resp, t, *name, kerr.ClusterAuthorizationFailed.Code, clusterScopedMessage(configResourceTypeName(t)+" configs"))
	}
	return &Answer{Response: resp}
}

// configResourceTypeName is Kafka's name of a config resource type.
func configResourceTypeName(t kmsg.ConfigResourceType) string {
	if s := t.String(); s != "" && s != "UNKNOWN" {
		return s
	}
	return fmt.Sprintf("resource type %d", t)
}

func describeConfigsAPI() api {
	return configsAPI(kmsg.DescribeConfigs,
		func(r *kmsg.DescribeConfigsRequest) []kmsg.DescribeConfigsRequestResource { return r.Resources },
		func(x *kmsg.DescribeConfigsRequestResource) (kmsg.ConfigResourceType, *string) {
			return x.ResourceType, &x.ResourceName
		},
		func(r *kmsg.DescribeConfigsResponse) *[]kmsg.DescribeConfigsResponseResource { return &r.Resources },
		func(x *kmsg.DescribeConfigsResponseResource) (kmsg.ConfigResourceType, *string, *string) {
			return x.ResourceType, &x.ResourceName, x.ErrorMessage
		},
		func(resp *kmsg.DescribeConfigsResponse, t kmsg.ConfigResourceType, name string, code int16, msg *string) {
			x := kmsg.NewDescribeConfigsResponseResource()
			x.ResourceType, x.ResourceName, x.ErrorCode, x.ErrorMessage = t, name, code, msg
			resp.Resources = append(resp.Resources, x)
		})
}

func alterConfigsAPI() api {
	return configsAPI(kmsg.AlterConfigs,
		func(r *kmsg.AlterConfigsRequest) []kmsg.AlterConfigsRequestResource { return r.Resources },
		func(x *kmsg.AlterConfigsRequestResource) (kmsg.ConfigResourceType, *string) {
			return x.ResourceType, &x.ResourceName
		},
		func(r *kmsg.AlterConfigsResponse) *[]kmsg.AlterConfigsResponseResource { return &r.Resources },
		func(x *kmsg.AlterConfigsResponseResource) (kmsg.ConfigResourceType, *string, *string) {
			return x.ResourceType, &x.ResourceName, x.ErrorMessage
		},
		func(resp *kmsg.AlterConfigsResponse, t kmsg.ConfigResourceType, name string, code int16, msg *string) {
			x := kmsg.NewAlterConfigsResponseResource()
			x.ResourceType, x.ResourceName, x.ErrorCode, x.ErrorMessage = t, name, code, msg
			resp.Resources = append(resp.Resources, x)
		})
}

func incrementalAlterConfigsAPI() api {
	return configsAPI(kmsg.IncrementalAlterConfigs,
		func(r *kmsg.IncrementalAlterConfigsRequest) []kmsg.IncrementalAlterConfigsRequestResource {
			return r.Resources
		},
		func(x *kmsg.IncrementalAlterConfigsRequestResource) (kmsg.ConfigResourceType, *string) {
			return x.ResourceType, &x.ResourceName
		},
		func(r *kmsg.IncrementalAlterConfigsResponse) *[]kmsg.IncrementalAlterConfigsResponseResource {
			return &r.Resources
		},
		func(x *kmsg.IncrementalAlterConfigsResponseResource) (kmsg.ConfigResourceType, *string, *string) {
			return x.ResourceType, &x.ResourceName, x.ErrorMessage
		},
		func(resp *kmsg.IncrementalAlterConfigsResponse, t kmsg.ConfigResourceType, name string, code int16, msg *string) {
			x := kmsg.NewIncrementalAlterConfigsResponseResource()
			x.ResourceType, x.ResourceName, x.ErrorCode, x.ErrorMessage = t, name, code, msg
			resp.Resources = append(resp.Resources, x)
		})
}

// ListConfigResources (v1+ every type) lists the cluster's resources: the
// answer keeps the tenant's topics and groups and the typeless rest.
func listConfigResourcesAPI() api {
	return api{
		key: key(kmsg.ListConfigResources),
		response: typedResponse(func(m *Mapper, r *kmsg.ListConfigResourcesResponse) error {
			r.ConfigResources = downResources(m, r.ConfigResources, func(x *kmsg.ListConfigResourcesResponseConfigResource) (kmsg.ConfigResourceType, *string, *string) {
				return kmsg.ConfigResourceType(x.Type), &x.Name, nil
			})
			return nil
		}),
		fields: []string{"resp.ConfigResources.Name"},
	}
}
