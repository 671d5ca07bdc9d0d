package config

import (
	"fmt"
	"strings"

	"github.com/kproxy/kproxy/policy/policyconfig"
)

// ClusterPolicy finds the policy the cluster vc enforces in c ("" for a
// file without virtual clusters) and the key it is written at: a virtual
// cluster without a policy of its own inherits the top level's.
func (c *Config) ClusterPolicy(vc string) (*policyconfig.Policy, string, error) {
	if len(c.VirtualClusters) == 0 {
		if vc != "" {
			return nil, "", fmt.Errorf("virtual cluster %q: the file has no virtual_clusters", vc)
		}
		return c.Policy, "policy", nil
	}
	var names []string
	for i, vcl := range c.VirtualClusters {
		names = append(names, vcl.Name)
		if vcl.Name != vc {
			continue
		}
		if vcl.Policy != nil {
			return vcl.Policy, fmt.Sprintf("virtual_clusters[%d].policy", i), nil
		}
		return c.Policy, "policy", nil
	}
	if vc == "" {
		return nil, "", fmt.Errorf("virtual cluster: the file has virtual_clusters; name one of %s", strings.Join(names, ", "))
	}
	return nil, "", fmt.Errorf("virtual cluster %q: not in the file; valid: %s", vc, strings.Join(names, ", "))
}
