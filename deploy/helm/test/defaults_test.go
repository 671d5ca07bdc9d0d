package helmtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// TestNetworkPolicy: off by default; on, it admits the Kafka ports from
// networkPolicy.clients and the admin port from networkPolicy.admin only.
func TestNetworkPolicy(t *testing.T) {
	if objs := render(t, upstreamValues); len(objs.networkPolicies) != 0 {
		t.Errorf("NetworkPolicy rendered by default: %v", objs.kinds)
	}
	objs := render(t, upstreamValues, `
networkPolicy:
  enabled: true
  clients: [{namespaceSelector: {matchLabels: {kafka-client: "true"}}}]
  admin: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}}]
`)
	np := mustGet(t, objs.networkPolicies, fullname)
	pod := mustGet(t, objs.deployments, fullname).Spec.Template
	if !selects(np.Spec.PodSelector.MatchLabels, pod.Labels) {
		t.Errorf("NetworkPolicy selects %v, not the pods %v", np.Spec.PodSelector.MatchLabels, pod.Labels)
	}
	kp := pod.Spec.Containers[0]
	for _, rule := range np.Spec.Ingress {
		var ports []int
		for _, p := range rule.Ports {
			ports = append(ports, p.Port.IntValue())
		}
		if len(rule.From) != 1 || rule.From[0].NamespaceSelector == nil {
			t.Errorf("rule %+v admits from anywhere", rule)
			continue
		}
		from := rule.From[0].NamespaceSelector.MatchLabels
		admin := slices.Contains(ports, containerPort(kp, "admin"))
		switch {
		case from["kafka-client"] == "true" && !admin:
			var want []int
			for _, p := range kp.Ports {
				if p.Name != "admin" {
					want = append(want, int(p.ContainerPort))
				}
			}
			if !slices.Equal(ports, want) {
				t.Errorf("clients are admitted to %v, want the Kafka ports %v", ports, want)
			}
		case from["kubernetes.io/metadata.name"] == "monitoring" && len(ports) == 1 && admin:
		default:
			t.Errorf("rule admits %v to %v", from, ports)
		}
	}
	if len(np.Spec.Ingress) != 2 || !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("NetworkPolicy %+v, want two ingress rules and egress left open", np.Spec)
	}
}

func containerPort(c corev1.Container, name string) int {
	for _, p := range c.Ports {
		if p.Name == name {
			return int(p.ContainerPort)
		}
	}
	return -1
}

// TestTopologySpreadOverrides: the user's constraints replace the default
// spread, and defaultTopologySpread: false leaves none.
func TestTopologySpreadOverrides(t *testing.T) {
	for _, tc := range []struct {
		values string
		keys   []string
	}{
		{"topologySpreadConstraints: [{maxSkew: 2, topologyKey: rack, whenUnsatisfiable: DoNotSchedule}]", []string{"rack"}},
		{"defaultTopologySpread: false", nil},
	} {
		spec := mustGet(t, render(t, upstreamValues, tc.values).deployments, fullname).Spec.Template.Spec
		var keys []string
		for _, c := range spec.TopologySpreadConstraints {
			keys = append(keys, c.TopologyKey)
		}
		if !slices.Equal(keys, tc.keys) {
			t.Errorf("%s: spread over %v, want %v", tc.values, keys, tc.keys)
		}
	}
}

// TestRenderedSidecarProbesAnswer runs the sidecar's rendered exec probes
// (kproxy probe on the loopback admin listener) against the real kproxy
// running the rendered configuration: each exits 0.
func TestRenderedSidecarProbesAnswer(t *testing.T) {
	s := startRenderedSidecar(t, "t")
	objs := render(t, s.base)
	spec := mustGet(t, objs.deployments, fullname+"-example").Spec.Template.Spec
	kp := spec.InitContainers[slices.IndexFunc(spec.InitContainers, isKproxy)]
	for name, p := range map[string]*corev1.Probe{"startup": kp.StartupProbe, "readiness": kp.ReadinessProbe, "liveness": kp.LivenessProbe} {
		if p == nil || p.Exec == nil || len(p.Exec.Command) < 3 || p.Exec.Command[0] != "/kproxy" {
			t.Fatalf("%s probe %+v, want an exec of /kproxy probe", name, p)
		}
		cmd := exec.Command(s.bin, p.Exec.Command[1:]...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s probe %s: %v\n%s", name, strings.Join(p.Exec.Command, " "), err, out)
		}
	}
}
