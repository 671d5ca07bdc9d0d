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

// handleDescribeConfigs enforces DescribeConfigs on each resource; denied
// resources are split off.
func handleDescribeConfigs(c *reqCtx, r *kmsg.DescribeConfigsRequest) filter.Verdict {
	orig := r.Resources
	keys := make([]configKey, len(orig))
	denials := make([]*denial, len(orig))
	denied := 0
	for i, res := range orig {
		keys[i] = configKey{res.ResourceType, res.ResourceName}
		rt, name := configResource(res.ResourceType, res.ResourceName)
		if denials[i] = c.check(OpDescribeConfigs, rt, name); denials[i] != nil {
			denied++
		}
	}
	if denied == 0 {
		return filter.Verdict{}
	}
	return c.split(r, denied == len(orig), func() { r.Resources = keepAllowed(orig, denials) }, func(resp kmsg.Response) error {
		dr, ok := resp.(*kmsg.DescribeConfigsResponse)
		if !ok {
			return errWrongResponse(resp)
		}
		dr.Resources = mergeInOrder(dr.Resources, func(x *kmsg.DescribeConfigsResponseResource) configKey {
			return configKey{x.ResourceType, x.ResourceName}
		}, keys, func(i int) (kmsg.DescribeConfigsResponseResource, bool) {
			d, ok := denialAt(denials, i)
			if !ok {
				return kmsg.DescribeConfigsResponseResource{}, false
			}
			x := kmsg.NewDescribeConfigsResponseResource()
			x.ResourceType, x.ResourceName = keys[i].typ, keys[i].name
			x.ErrorCode, x.ErrorMessage = d.code, d.msgPtr()
			return x, true
		})
		return nil
	})
}

// handleAlterConfigs enforces AlterConfigs on each resource and, on topics,
// the topic_changes config rules. AlterConfigs replaces a resource's whole
// config, so required configs must be in it.
func handleAlterConfigs(c *reqCtx, r *kmsg.AlterConfigsRequest) filter.Verdict {
	orig := r.Resources
	keys := make([]configKey, len(orig))
	denials := make([]*denial, len(orig))
	denied := 0
	for i, res := range orig {
		keys[i] = configKey{res.ResourceType, res.ResourceName}
		rt, name := configResource(res.ResourceType, res.ResourceName)
		d := c.check(OpAlterConfigs, rt, name)
		if d == nil && rt == ResTopic {
			set := make(map[string]*string, len(res.Configs))
			for _, cfg := range res.Configs {
				set[cfg.Name] = cfg.Value
			}
			d = c.checkTopicConfigs(name, func(g *govRule) *violation { return g.checkConfigs(set, true) })
		}
		if denials[i] = d; d != nil {
			denied++
		}
	}
	if denied == 0 {
		return filter.Verdict{}
	}
	return c.split(r, denied == len(orig), func() { r.Resources = keepAllowed(orig, denials) }, func(resp kmsg.Response) error {
		ar, ok := resp.(*kmsg.AlterConfigsResponse)
		if !ok {
			return errWrongResponse(resp)
		}
		ar.Resources = mergeInOrder(ar.Resources, func(x *kmsg.AlterConfigsResponseResource) configKey {
			return configKey{x.ResourceType, x.ResourceName}
		}, keys, func(i int) (kmsg.AlterConfigsResponseResource, bool) {
			d, ok := denialAt(denials, i)
			if !ok {
				return kmsg.AlterConfigsResponseResource{}, false
			}
			x := kmsg.NewAlterConfigsResponseResource()
			x.ResourceType, x.ResourceName = keys[i].typ, keys[i].name
			x.ErrorCode, x.ErrorMessage = d.code, d.msgPtr()
			return x, true
		})
		return nil
	})
}

// handleIncrementalAlterConfigs enforces AlterConfigs on each resource and,
// on topics, the topic_changes config rules: a forbidden key may not be
// set, appended to or subtracted from; a required key may not be deleted,
// and a value set for it must satisfy the requirement.
func handleIncrementalAlterConfigs(c *reqCtx, r *kmsg.IncrementalAlterConfigsRequest) filter.Verdict {
	orig := r.Resources
	keys := make([]configKey, len(orig))
	denials := make([]*denial, len(orig))
	denied := 0
	for i, res := range orig {
		keys[i] = configKey{res.ResourceType, res.ResourceName}
		rt, name := configResource(res.ResourceType, res.ResourceName)
		d := c.check(OpAlterConfigs, rt, name)
		if d == nil && rt == ResTopic {
			d = c.checkTopicConfigs(name, func(g *govRule) *violation { return incrementalViolation(g, res.Configs) })
		}
		if denials[i] = d; d != nil {
			denied++
		}
	}
	if denied == 0 {
		return filter.Verdict{}
	}
	return c.split(r, denied == len(orig), func() { r.Resources = keepAllowed(orig, denials) }, func(resp kmsg.Response) error {
		ar, ok := resp.(*kmsg.IncrementalAlterConfigsResponse)
		if !ok {
			return errWrongResponse(resp)
		}
		ar.Resources = mergeInOrder(ar.Resources, func(x *kmsg.IncrementalAlterConfigsResponseResource) configKey {
			return configKey{x.ResourceType, x.ResourceName}
		}, keys, func(i int) (kmsg.IncrementalAlterConfigsResponseResource, bool) {
			d, ok := denialAt(denials, i)
			if !ok {
				return kmsg.IncrementalAlterConfigsResponseResource{}, false
			}
			x := kmsg.NewIncrementalAlterConfigsResponseResource()
			x.ResourceType, x.ResourceName = keys[i].typ, keys[i].name
			x.ErrorCode, x.ErrorMessage = d.code, d.msgPtr()
			return x, true
		})
		return nil
	})
}

func incrementalViolation(g *govRule, changes []kmsg.IncrementalAlterConfigsRequestResourceConfig) *violation {
	set := map[string]*string{}
	for _, ch := range changes {
		if ch.Op == kmsg.IncrementalAlterConfigOpDelete {
			for _, req := range g.topic.required {
				if req.Key == ch.Name {
					return &violation{rule: g.name, check: "required_configs", code: errPolicyViolation,
						what: fmt.Sprintf("config %s may not be deleted (required_configs %q)", ch.Name, req.String())}
				}
			}
			continue
		}
		if ch.Op == kmsg.IncrementalAlterConfigOpSet {
			set[ch.Name] = ch.Value
			continue
		}
		// APPEND and SUBTRACT change list configs: only forbidden keys apply.
		for i := range g.topic.forbidden {
			if g.topic.forbidden[i].match(ch.Name) {
				return &violation{rule: g.name, check: "forbidden_configs", code: errPolicyViolation,
					what: fmt.Sprintf("config %q is forbidden (forbidden_configs %q)", ch.Name, g.topic.forbidden[i].source)}
			}
		}
	}
	return g.checkConfigs(set, false)
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
