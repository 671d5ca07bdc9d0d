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

func describeConfigsAPI() api {
	return api{
		key: key(kmsg.DescribeConfigs),
		request: simpleRequest(func(m *Mapper, r *kmsg.DescribeConfigsRequest) {
			for i := range r.Resources {
				r.Resources[i].ResourceName = m.upResource(r.Resources[i].ResourceType, r.Resources[i].ResourceName)
			}
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.DescribeConfigsResponse) error {
			r.Resources = downResources(m, r.Resources, func(x *kmsg.DescribeConfigsResponseResource) (kmsg.ConfigResourceType, *string, *string) {
				return x.ResourceType, &x.ResourceName, x.ErrorMessage
			})
			return nil
		}),
		fields: []string{"req.Resources.ResourceName", "resp.Resources.ResourceName"},
	}
}

func alterConfigsAPI() api {
	return api{
		key: key(kmsg.AlterConfigs),
		request: simpleRequest(func(m *Mapper, r *kmsg.AlterConfigsRequest) {
			for i := range r.Resources {
				r.Resources[i].ResourceName = m.upResource(r.Resources[i].ResourceType, r.Resources[i].ResourceName)
			}
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.AlterConfigsResponse) error {
			r.Resources = downResources(m, r.Resources, func(x *kmsg.AlterConfigsResponseResource) (kmsg.ConfigResourceType, *string, *string) {
				return x.ResourceType, &x.ResourceName, x.ErrorMessage
			})
			return nil
		}),
		fields: []string{"req.Resources.ResourceName", "resp.Resources.ResourceName"},
	}
}

func incrementalAlterConfigsAPI() api {
	return api{
		key: key(kmsg.IncrementalAlterConfigs),
		request: simpleRequest(func(m *Mapper, r *kmsg.IncrementalAlterConfigsRequest) {
			for i := range r.Resources {
				r.Resources[i].ResourceName = m.upResource(r.Resources[i].ResourceType, r.Resources[i].ResourceName)
			}
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.IncrementalAlterConfigsResponse) error {
			r.Resources = downResources(m, r.Resources, func(x *kmsg.IncrementalAlterConfigsResponseResource) (kmsg.ConfigResourceType, *string, *string) {
				return x.ResourceType, &x.ResourceName, x.ErrorMessage
			})
			return nil
		}),
		fields: []string{"req.Resources.ResourceName", "resp.Resources.ResourceName"},
	}
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
