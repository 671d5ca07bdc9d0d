package helmtest

import (
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kproxy/kproxy/internal/config"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// kafkaPorts is what kproxy listens on for clients, by port name, from
// kproxy's own port map: the bootstrap port, each node's port and the SNI
// port; with virtual clusters, each one's (prefixed vcN-) instead.
func kafkaPorts(t *testing.T, tc chartCase, cfg *config.Config) map[string]int {
	t.Helper()
	ports := map[string]int{}
	if len(cfg.VirtualClusters) == 0 {
		l := cfg.Listeners
		if l.PortPerBrokerEnabled() {
			ports["bootstrap"] = l.BootstrapPort
			for _, id := range tc.nodeIDs {
				ports[fmt.Sprintf("broker-%d", id)] = l.BrokerPort(id)
			}
		}
		if l.SNI != nil {
			ports["sni"] = l.SNI.Port
		}
	}
	for i, vc := range cfg.VirtualClusters {
		l := vc.Listeners
		if l.BootstrapPort != 0 {
			ports[fmt.Sprintf("vc%d-bootstrap", i)] = l.BootstrapPort
		}
		if l.BrokerPortBase != 0 {
			for _, id := range tc.nodeIDs {
				ports[fmt.Sprintf("vc%d-%d", i, id)] = l.BrokerPort(id)
			}
		}
		if l.SNI != nil && l.SNI.Port != 0 {
			ports[fmt.Sprintf("vc%d-sni", i)] = l.SNI.Port
		}
	}
	return ports
}

func adminPort(t *testing.T, cfg *config.Config) int {
	t.Helper()
	_, port, err := net.SplitHostPort(cfg.Admin.Listen)
	if err != nil {
		t.Fatalf("admin.listen %q: %v", cfg.Admin.Listen, err)
	}
	p, _ := strconv.Atoi(port)
	return p
}

// checkServicePorts checks svc exposes exactly want (name -> port), each
// port targeting the kproxy container port of the same name and number,
// so what clients dial is what kproxy advertised.
func checkServicePorts(t *testing.T, svc *corev1.Service, kp corev1.Container, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, p := range svc.Spec.Ports {
		got[p.Name] = int(p.Port)
		if target := resolvePort(p.TargetPort, kp); target != int(p.Port) {
			t.Errorf("Service %s port %s: %d targets container port %d; clients are told %d", svc.Name, p.Name, p.Port, target, p.Port)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("Service %s ports %v, want %v", svc.Name, got, want)
	}
}

func resolvePort(p intstr.IntOrString, c corev1.Container) int {
	if p.Type == intstr.Int {
		return p.IntValue()
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort)
		}
	}
	return -1
}

// configFiles lists every file the configuration tells kproxy to read.
func configFiles(cfg *config.Config) []string {
	var files []string
	add := func(f ...string) {
		for _, s := range f {
			if s != "" {
				files = append(files, s)
			}
		}
	}
	if t := cfg.Listeners.TLS; t != nil {
		add(t.CertFile, t.KeyFile, t.ClientCAFile)
	}
	if sni := cfg.Listeners.SNI; sni != nil {
		if t := sni.TLS; t != nil {
			add(t.CertFile, t.KeyFile, t.ClientCAFile)
		}
		for _, kp := range sni.Certificates {
			add(kp.CertFile, kp.KeyFile)
		}
	}
	if t := cfg.Upstream.TLS; t != nil {
		add(t.CAFile, t.CertFile, t.KeyFile)
	}
	if s := cfg.Upstream.SASL; s != nil {
		add(s.PasswordFile, s.ClientSecretFile, s.TokenEndpointCAFile)
	}
	return files
}

// mountOf is the mount of c whose directory holds file.
func mountOf(t *testing.T, c corev1.Container, file string) corev1.VolumeMount {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if filepath.Dir(file) == filepath.Clean(m.MountPath) {
			return m
		}
	}
	t.Fatalf("%s is on no volume mount of %s: %+v", file, c.Name, c.VolumeMounts)
	return corev1.VolumeMount{}
}

func volume(t *testing.T, pod corev1.PodSpec, name string) corev1.Volume {
	t.Helper()
	for _, v := range pod.Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %s", name)
	return corev1.Volume{}
}

func mustGet[T any](t *testing.T, m map[string]*T, name string) *T {
	t.Helper()
	v, ok := m[name]
	if !ok {
		t.Fatalf("no %T named %s", v, name)
	}
	return v
}

// selects reports whether selector's labels are all among labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
