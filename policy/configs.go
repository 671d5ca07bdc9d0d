package policy

import (
	"fmt"
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// configResource is the ACL resource a config resource is authorized as:
// topics and groups as themselves; brokers, broker loggers and client
// metrics subscriptions as the cluster.
func configResource(t kmsg.ConfigResourceType, name string) (ResourceType, string) {
	switch t {
	case kmsg.ConfigResourceTypeTopic:
		return ResTopic, name
	case kmsg.ConfigResourceTypeGroupConfig:
		return ResGroup, name
	}
	return ResCluster, ClusterName
}

type configKey struct {
	typ  kmsg.ConfigResourceType
	name string
}

// configListing is the listing of a config API: its request's resources
// and its response's, keyed by type and name, and a denied one answered
// with the denial's error (entryAnswering). Config APIs are admin
// requests, so the keys are read by kmsg's field names too.
func configListing[T, RT any, Resp kmsg.Response](items *[]T, respItems func(Resp) *[]RT) listing[configKey, T, RT, Resp] {
	return listing[configKey, T, RT, Resp]{items: items, key: configKeyOf[T], respItems: respItems, respKey: configKeyOf[RT],
		denied: func(x *T, d *denial) RT {
			k := configKeyOf(x)
			rt := entryAnswering[RT]("ResourceName", k.name, d)
			reflect.ValueOf(&rt).Elem().FieldByName("ResourceType").Set(reflect.ValueOf(k.typ))
			return rt
		}}
}

// configKeyOf is the key of a request's or a response's config resource.
func configKeyOf[T any](x *T) configKey {
	v := reflect.ValueOf(x).Elem()
	return configKey{v.FieldByName("ResourceType").Interface().(kmsg.ConfigResourceType), v.FieldByName("ResourceName").String()}
}

// handleDescribeConfigs enforces DescribeConfigs on each resource; denied
// resources are split off.
func handleDescribeConfigs(c *reqCtx, r *kmsg.DescribeConfigsRequest) filter.Verdict {
	resources := configListing(&r.Resources, func(resp *kmsg.DescribeConfigsResponse) *[]kmsg.DescribeConfigsResponseResource {
		return &resp.Resources
	})
	return splitEach(c, r, resources, func(res *kmsg.DescribeConfigsRequestResource) *denial {
		rt, name := configResource(res.ResourceType, res.ResourceName)
		return c.check(OpDescribeConfigs, rt, name)
	})
}

// handleAlterConfigs enforces AlterConfigs on each resource and, on topics,
// the topic_changes config rules. AlterConfigs replaces a resource's whole
// config, so required configs must be in it.
func handleAlterConfigs(c *reqCtx, r *kmsg.AlterConfigsRequest) filter.Verdict {
	resources := configListing(&r.Resources, func(resp *kmsg.AlterConfigsResponse) *[]kmsg.AlterConfigsResponseResource { return &resp.Resources })
	return splitEach(c, r, resources, func(res *kmsg.AlterConfigsRequestResource) *denial {
		rt, name := configResource(res.ResourceType, res.ResourceName)
		d := c.check(OpAlterConfigs, rt, name)
		if d == nil && rt == ResTopic {
			set := make([]configEntry, 0, len(res.Configs))
			for _, cfg := range res.Configs {
				set = append(set, configEntry{cfg.Name, cfg.Value})
			}
			d = c.checkTopicConfigs(name, func(g *govRule) *violation { return g.checkConfigs(set, true) })
		}
		return d
	})
}

// handleIncrementalAlterConfigs enforces AlterConfigs on each resource and,
// on topics, the topic_changes config rules (incrementalViolation).
func handleIncrementalAlterConfigs(c *reqCtx, r *kmsg.IncrementalAlterConfigsRequest) filter.Verdict {
	resources := configListing(&r.Resources, func(resp *kmsg.IncrementalAlterConfigsResponse) *[]kmsg.IncrementalAlterConfigsResponseResource {
		return &resp.Resources
	})
	return splitEach(c, r, resources, func(res *kmsg.IncrementalAlterConfigsRequestResource) *denial {
		rt, name := configResource(res.ResourceType, res.ResourceName)
		d := c.check(OpAlterConfigs, rt, name)
		if d == nil && rt == ResTopic {
			d = c.checkTopicConfigs(name, func(g *govRule) *violation { return incrementalViolation(g, res.Configs) })
		}
		return d
	})
}

// incrementalViolation applies a topic_changes rule to the changes of an
// IncrementalAlterConfigs: a forbidden key may not be set, appended to or
// subtracted from (deleting it restores the default, which is allowed); a
// required key may be SET to a value that satisfies the requirement and
// changed in no other way: DELETE would drop it, and the result of APPEND,
// SUBTRACT or an operation kproxy does not know depends on the current
// value, which kproxy does not see (fail closed).
func incrementalViolation(g *govRule, changes []kmsg.IncrementalAlterConfigsRequestResourceConfig) *violation {
	for _, ch := range changes {
		if ch.Op != kmsg.IncrementalAlterConfigOpDelete {
			if v := g.checkForbidden(ch.Name); v != nil {
				return v
			}
		}
		for _, req := range g.topic.required {
			if req.Key != ch.Name {
				continue
			}
			switch ch.Op {
			case kmsg.IncrementalAlterConfigOpSet:
				if v := g.checkRequired(req, ch.Value); v != nil {
					return v
				}
			case kmsg.IncrementalAlterConfigOpDelete:
				return &violation{rule: g.name, check: "required_configs", code: errPolicyViolation,
					what: fmt.Sprintf("config %s may not be deleted (required_configs %q)", ch.Name, req.String())}
			default:
				return &violation{rule: g.name, check: "required_configs", code: errPolicyViolation,
					what: fmt.Sprintf("config %s may only be SET, not changed with %s (required_configs %q)", ch.Name, ch.Op, req.String())}
			}
		}
	}
	return nil
}

// checkTopicConfigs runs a config check for every topic_changes rule that
// covers topic, returning the first violation's denial.
func (c *reqCtx) checkTopicConfigs(topic string, check func(*govRule) *violation) *denial {
	for _, g := range c.governance() {
		if g.topic == nil || !g.coversTopic(topic) {
			continue
		}
		if v := check(g); v != nil {
			if d := c.violated(v, ResTopic, topic); d != nil {
				return d
			}
		}
	}
	return nil
}
