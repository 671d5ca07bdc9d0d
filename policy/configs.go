package policy

import (
	"fmt"

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

// configSplit is the shape the config APIs share: a request lists
// resources (T), each decided on its own, and the response answers each
// resource (RT) with one error. Denied resources are removed from the
// request and answered by the policy, in the client's order.
type configSplit[T, RT any, Resp kmsg.Response] struct {
	resources *[]T
	key       func(*T) configKey
	// respResources is the response's resource list.
	respResources func(resp Resp) *[]RT
	respKey       func(*RT) configKey
	// denied is the policy's answer for a denied resource.
	denied func(configKey, *denial) RT
}

// apply decides each resource with decide and returns the verdict for req.
func (s configSplit[T, RT, Resp]) apply(c *reqCtx, req kmsg.Request, decide func(*T) *denial) filter.Verdict {
	orig := *s.resources
	keys := make([]configKey, len(orig))
	denials := make([]*denial, len(orig))
	denied := 0
	for i := range orig {
		keys[i] = s.key(&orig[i])
		if denials[i] = decide(&orig[i]); denials[i] != nil {
			denied++
		}
	}
	if denied == 0 {
		return filter.Verdict{}
	}
	strip := func() { *s.resources = keepAllowed(orig, denials) }
	return c.split(req, denied == len(orig), strip, filter.Then(func(resp Resp) error {
		list := s.respResources(resp)
		*list = mergeInOrder(*list, s.respKey, keys, func(i int) (RT, bool) {
			d, ok := denialAt(denials, i)
			if !ok {
				var none RT
				return none, false
			}
			return s.denied(keys[i], d), true
		})
		return nil
	}))
}

// handleDescribeConfigs enforces DescribeConfigs on each resource; denied
// resources are split off.
func handleDescribeConfigs(c *reqCtx, r *kmsg.DescribeConfigsRequest) filter.Verdict {
	return configSplit[kmsg.DescribeConfigsRequestResource, kmsg.DescribeConfigsResponseResource, *kmsg.DescribeConfigsResponse]{
		resources: &r.Resources,
		key: func(x *kmsg.DescribeConfigsRequestResource) configKey {
			return configKey{x.ResourceType, x.ResourceName}
		},
		respResources: func(dr *kmsg.DescribeConfigsResponse) *[]kmsg.DescribeConfigsResponseResource { return &dr.Resources },
		respKey: func(x *kmsg.DescribeConfigsResponseResource) configKey {
			return configKey{x.ResourceType, x.ResourceName}
		},
		denied: func(k configKey, d *denial) kmsg.DescribeConfigsResponseResource {
			x := kmsg.NewDescribeConfigsResponseResource()
			x.ResourceType, x.ResourceName = k.typ, k.name
			x.ErrorCode, x.ErrorMessage = d.code, d.msgPtr()
			return x
		},
	}.apply(c, r, func(res *kmsg.DescribeConfigsRequestResource) *denial {
		rt, name := configResource(res.ResourceType, res.ResourceName)
		return c.check(OpDescribeConfigs, rt, name)
	})
}

// handleAlterConfigs enforces AlterConfigs on each resource and, on topics,
// the topic_changes config rules. AlterConfigs replaces a resource's whole
// config, so required configs must be in it.
func handleAlterConfigs(c *reqCtx, r *kmsg.AlterConfigsRequest) filter.Verdict {
	return configSplit[kmsg.AlterConfigsRequestResource, kmsg.AlterConfigsResponseResource, *kmsg.AlterConfigsResponse]{
		resources: &r.Resources,
		key: func(x *kmsg.AlterConfigsRequestResource) configKey {
			return configKey{x.ResourceType, x.ResourceName}
		},
		respResources: func(ar *kmsg.AlterConfigsResponse) *[]kmsg.AlterConfigsResponseResource { return &ar.Resources },
		respKey: func(x *kmsg.AlterConfigsResponseResource) configKey {
			return configKey{x.ResourceType, x.ResourceName}
		},
		denied: func(k configKey, d *denial) kmsg.AlterConfigsResponseResource {
			x := kmsg.NewAlterConfigsResponseResource()
			x.ResourceType, x.ResourceName = k.typ, k.name
			x.ErrorCode, x.ErrorMessage = d.code, d.msgPtr()
			return x
		},
	}.apply(c, r, func(res *kmsg.AlterConfigsRequestResource) *denial {
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
	return configSplit[kmsg.IncrementalAlterConfigsRequestResource, kmsg.IncrementalAlterConfigsResponseResource, *kmsg.IncrementalAlterConfigsResponse]{
		resources: &r.Resources,
		key: func(x *kmsg.IncrementalAlterConfigsRequestResource) configKey {
			return configKey{x.ResourceType, x.ResourceName}
		},
		respResources: func(ar *kmsg.IncrementalAlterConfigsResponse) *[]kmsg.IncrementalAlterConfigsResponseResource {
			return &ar.Resources
		},
		respKey: func(x *kmsg.IncrementalAlterConfigsResponseResource) configKey {
			return configKey{x.ResourceType, x.ResourceName}
		},
		denied: func(k configKey, d *denial) kmsg.IncrementalAlterConfigsResponseResource {
			x := kmsg.NewIncrementalAlterConfigsResponseResource()
			x.ResourceType, x.ResourceName = k.typ, k.name
			x.ErrorCode, x.ErrorMessage = d.code, d.msgPtr()
			return x
		},
	}.apply(c, r, func(res *kmsg.IncrementalAlterConfigsRequestResource) *denial {
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
