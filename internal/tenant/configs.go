package tenant

import "github.com/twmb/franz-go/pkg/kmsg"

// Config resources name a topic or a group by ResourceName, per
// ResourceType: those get the tenant's prefixes. Broker, broker logger and
// client metrics resources carry no tenant's name and pass unchanged (a
// virtual cluster's policy decides who may alter the cluster's settings).

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
// resource (respResources: type, name, error message).
func configsAPI[Req kmsg.Request, Resp kmsg.Response, RR, PR any](k kmsg.Key,
	reqResources func(Req) []RR, reqRef func(*RR) (kmsg.ConfigResourceType, *string),
	respResources func(Resp) *[]PR, respRef func(*PR) (kmsg.ConfigResourceType, *string, *string),
) api {
	return api{
		key: key(k),
		request: simpleRequest(func(m *Mapper, r Req) {
			rs := reqResources(r)
			for i := range rs {
				t, name := reqRef(&rs[i])
				*name = m.upResource(t, *name)
			}
		}),
		response: typedResponse(func(m *Mapper, r Resp) error {
			rs := respResources(r)
			*rs = downResources(m, *rs, respRef)
			return nil
		}),
		fields: []string{"req.Resources.ResourceName", "resp.Resources.ResourceName"},
	}
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
