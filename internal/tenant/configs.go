package tenant

import (
	"context"
	"fmt"
	"reflect"

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

// resources is the list of config resources of a request or response.
// The configs APIs (DescribeConfigs, AlterConfigs,
// IncrementalAlterConfigs, ListConfigResources) name a resource alike, so
// it is read by kmsg's field names: the resource's type and name fields
// and, in a response, ErrorCode and ErrorMessage.
type resources struct {
	list           reflect.Value
	typeOf, nameOf string
}

// configResources is the Resources list of the three configs APIs.
func configResources(msg any) resources {
	return resources{reflect.ValueOf(msg).Elem().FieldByName("Resources"), "ResourceType", "ResourceName"}
}

func (rs resources) len() int { return rs.list.Len() }

// at is resource i's type and name.
func (rs resources) at(i int) (kmsg.ConfigResourceType, *string) {
	v := rs.list.Index(i)
	return kmsg.ConfigResourceType(v.FieldByName(rs.typeOf).Int()), v.FieldByName(rs.nameOf).Addr().Interface().(*string)
}

// add appends a resource answered with code and msg.
func (rs resources) add(t kmsg.ConfigResourceType, name string, code int16, msg *string) {
	x := reflect.New(rs.list.Type().Elem())
	if d, ok := x.Interface().(interface{ Default() }); ok {
		d.Default()
	}
	v := x.Elem()
	v.FieldByName(rs.typeOf).SetInt(int64(t))
	v.FieldByName(rs.nameOf).SetString(name)
	v.FieldByName("ErrorCode").SetInt(int64(code))
	v.FieldByName("ErrorMessage").Set(reflect.ValueOf(msg))
	rs.list.Set(reflect.Append(rs.list, v))
}

// down maps a response's resources back, dropping what is not the
// tenant's and stripping prefixes from error messages.
func (rs resources) down(m *Mapper) {
	kept := 0
	for i := 0; i < rs.len(); i++ {
		t, name := rs.at(i)
		down, ok := m.downResource(t, *name)
		if !ok {
			continue
		}
		*name = down
		if msg := rs.list.Index(i).FieldByName("ErrorMessage"); msg.IsValid() {
			m.DownMessage(msg.Interface().(*string))
		}
		rs.list.Index(kept).Set(rs.list.Index(i))
		kept++
	}
	for i := kept; i < rs.len(); i++ {
		rs.list.Index(i).SetZero()
	}
	rs.list.SetLen(kept)
}

// configsAPI is the entry of a configs API: its requests list resources
// and its responses answer per resource.
func configsAPI[Req kmsg.Request, Resp kmsg.Response](k kmsg.Key) api {
	return api{
		key: key(k),
		request: typedRequest(func(ctx context.Context, m *Mapper, r Req) (bool, error) {
			rs := configResources(r)
			if err := refuseClusterResources[Resp](ctx, r, rs); err != nil {
				return false, err
			}
			for i := 0; i < rs.len(); i++ {
				t, name := rs.at(i)
				*name = m.upResource(t, *name)
			}
			return false, nil
		}),
		response: typedResponse(func(m *Mapper, r Resp) error {
			configResources(r).down(m)
			return nil
		}),
		fields: []string{"req.Resources.ResourceName", "resp.Resources.ResourceName"},
	}
}

// refuseClusterResources is kproxy's answer to a configs request r naming
// a resource of the cluster's (isTenantResource false) from someone who is
// not a cluster operator; nil when there is none or the sender is one.
func refuseClusterResources[Resp kmsg.Response](ctx context.Context, r kmsg.Request, rs resources) error {
	if isClusterOperator(ctx) {
		return nil
	}
	refused := false
	for i := 0; i < rs.len(); i++ {
		t, _ := rs.at(i)
		refused = refused || !isTenantResource(t)
	}
	if !refused {
		return nil
	}
	resp := r.ResponseKind().(Resp)
	resp.SetVersion(r.GetVersion())
	answer := configResources(resp)
	for i := 0; i < rs.len(); i++ {
		t, name := rs.at(i)
		if isTenantResource(t) {
			answer.add(t, *name, kerr.InvalidRequest.Code, kmsg.StringPtr(msgNotRun))
			continue
		}
		answer.add(t, *name, kerr.ClusterAuthorizationFailed.Code, clusterScopedMessage(configResourceTypeName(t)+" configs"))
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
	return configsAPI[*kmsg.DescribeConfigsRequest, *kmsg.DescribeConfigsResponse](kmsg.DescribeConfigs)
}

func alterConfigsAPI() api {
	return configsAPI[*kmsg.AlterConfigsRequest, *kmsg.AlterConfigsResponse](kmsg.AlterConfigs)
}

func incrementalAlterConfigsAPI() api {
	return configsAPI[*kmsg.IncrementalAlterConfigsRequest, *kmsg.IncrementalAlterConfigsResponse](kmsg.IncrementalAlterConfigs)
}

// ListConfigResources (v1+ every type) lists the cluster's resources: the
// answer keeps the tenant's topics and groups and the typeless rest.
func listConfigResourcesAPI() api {
	return api{
		key: key(kmsg.ListConfigResources),
		response: typedResponse(func(m *Mapper, r *kmsg.ListConfigResourcesResponse) error {
			resources{reflect.ValueOf(r).Elem().FieldByName("ConfigResources"), "Type", "Name"}.down(m)
			return nil
		}),
		fields: []string{"resp.ConfigResources.Name"},
	}
}
