package helmtest

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kproxy/kproxy/internal/config"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// checkGateway checks a gateway render: replicas or HPA, the Services and
// their ports, the PDB and the ServiceMonitor, each selecting what it should.
func checkGateway(t *testing.T, tc chartCase, objs *objects, cfg *config.Config) {
	dep := mustGet(t, objs.deployments, fullname)
	svc := mustGet(t, objs.services, fullname)
	if cfg.Listeners.BindHost != "0.0.0.0" {
		t.Errorf("listeners.bind_host %q: a gateway pod must accept connections on its pod address", cfg.Listeners.BindHost)
	}
	if host, _, _ := net.SplitHostPort(cfg.Admin.Listen); host != "0.0.0.0" {
		t.Errorf("admin.listen %q: Prometheus scrapes a gateway pod's address", cfg.Admin.Listen)
	}
	wantHost := fmt.Sprintf("%s.%s.svc.cluster.local", fullname, namespace)
	if tc.lb {
		wantHost = "kafka.example.com"
	}
	if cfg.Listeners.AdvertisedHost != wantHost {
		t.Errorf("listeners.advertised_host %q, want %q", cfg.Listeners.AdvertisedHost, wantHost)
	}

	if tc.hpa {
		if dep.Spec.Replicas != nil {
			t.Errorf("replicas %d set while the HPA owns the count", *dep.Spec.Replicas)
		}
		hpa := mustGet(t, objs.hpas, fullname)
		ref := hpa.Spec.ScaleTargetRef
		if ref.Kind != "Deployment" || ref.Name != dep.Name || ref.APIVersion != "apps/v1" {
			t.Errorf("HPA targets %+v, want the Deployment %s", ref, dep.Name)
		}
		if hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas != 3 || hpa.Spec.MaxReplicas != 9 {
			t.Errorf("HPA replicas %v-%d, want 3-9", hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas)
		}
	} else {
		if dep.Spec.Replicas == nil || *dep.Spec.Replicas != tc.replicas {
			t.Errorf("replicas %v, want %d", dep.Spec.Replicas, tc.replicas)
		}
		if len(objs.hpas) != 0 {
			t.Errorf("HPA rendered without autoscaling.enabled: %v", objs.kinds)
		}
	}

	pod := dep.Spec.Template
	if !selects(dep.Spec.Selector.MatchLabels, pod.Labels) {
		t.Errorf("Deployment selector %v does not select its pods %v", dep.Spec.Selector.MatchLabels, pod.Labels)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("gateway pod has %d containers, want kproxy alone", len(pod.Spec.Containers))
	}
	kp := pod.Spec.Containers[0]
	checkKproxyContainer(t, tc, pod.Spec, kp, cfg)
	checkSpread(t, pod)

	// The Service: bootstrap, each broker on kproxy's own port for it,
	// and admin; each targeting the container port of that name.
	checkServicePorts(t, svc, kp, kafkaPorts(t, tc, cfg)) // never admin
	admin := mustGet(t, objs.services, fullname+"-admin")
	if admin.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("admin Service type %s, want ClusterIP: the admin port is unauthenticated", admin.Spec.Type)
	}
	checkServicePorts(t, admin, kp, map[string]int{"admin": adminPort(t, cfg)})
	if !selects(admin.Spec.Selector, pod.Labels) {
		t.Errorf("admin Service selector %v does not select the pods %v", admin.Spec.Selector, pod.Labels)
	}
	if !selects(svc.Spec.Selector, pod.Labels) {
		t.Errorf("Service selector %v does not select the pods %v", svc.Spec.Selector, pod.Labels)
	}

	lb, haveLB := objs.services[fullname+"-lb"]
	if haveLB != tc.lb {
		t.Fatalf("LoadBalancer Service rendered %v, want %v", haveLB, tc.lb)
	}
	if tc.lb {
		if lb.Spec.Type != corev1.ServiceTypeLoadBalancer {
			t.Errorf("%s type %s", lb.Name, lb.Spec.Type)
		}
		checkServicePorts(t, lb, kp, kafkaPorts(t, tc, cfg)) // never admin
		if !selects(lb.Spec.Selector, pod.Labels) {
			t.Errorf("LB selector %v does not select the pods", lb.Spec.Selector)
		}
	}

	pdb := mustGet(t, objs.pdbs, fullname)
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PDB maxUnavailable %v, want 1", pdb.Spec.MaxUnavailable)
	}
	if !selects(pdb.Spec.Selector.MatchLabels, pod.Labels) {
		t.Errorf("PDB selector %v does not select the pods", pdb.Spec.Selector.MatchLabels)
	}

	if len(objs.serviceMonitors) == 1 != tc.monitor {
		t.Fatalf("ServiceMonitor rendered %d, want %v", len(objs.serviceMonitors), tc.monitor)
	}
	if tc.monitor {
		sm := mustGet(t, objs.serviceMonitors, fullname)
		if !selects(sm.Spec.Selector.MatchLabels, admin.Labels) || selects(sm.Spec.Selector.MatchLabels, svc.Labels) {
			t.Errorf("ServiceMonitor selector %v: want the admin Service %v alone, not the client Service %v",
				sm.Spec.Selector.MatchLabels, admin.Labels, svc.Labels)
		}
		checkAlertsMatchJob(t, admin.Labels[sm.Spec.JobLabel])
		if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "admin" || sm.Spec.Endpoints[0].Path != "/metrics" {
			t.Errorf("ServiceMonitor endpoints %+v, want the admin port's /metrics", sm.Spec.Endpoints)
		}
		if sm.Labels["release"] != "prometheus" {
			t.Errorf("ServiceMonitor labels %v lack serviceMonitor.labels", sm.Labels)
		}
	}
}

// checkSidecar checks a sidecar render: kproxy on loopback, the example
// pod with kproxy as a (native) sidecar whose readiness gates the app.
func checkSidecar(t *testing.T, tc chartCase, objs *objects, cfg *config.Config) {
	for _, kind := range objs.kinds {
		if !strings.HasPrefix(kind, "ConfigMap/") && !strings.HasPrefix(kind, "Deployment/") {
			t.Errorf("sidecar mode rendered %s: only the ConfigMap and the example belong to it", kind)
		}
	}
	if cfg.Listeners.BindHost != "127.0.0.1" || cfg.Listeners.AdvertisedHost != "127.0.0.1" {
		t.Errorf("sidecar listens on %s advertising %s, want 127.0.0.1 for both (the pod's own loopback)",
			cfg.Listeners.BindHost, cfg.Listeners.AdvertisedHost)
	}
	dep := mustGet(t, objs.deployments, fullname+"-example")
	spec := dep.Spec.Template.Spec
	var kp, app *corev1.Container
	if native := slices.IndexFunc(spec.InitContainers, isKproxy); native >= 0 {
		kp = &spec.InitContainers[native]
		if kp.RestartPolicy == nil || *kp.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			t.Errorf("kproxy init container without restartPolicy Always is not a sidecar: it would block the app")
		}
	} else if i := slices.IndexFunc(spec.Containers, isKproxy); i >= 0 {
		kp = &spec.Containers[i]
	} else {
		t.Fatalf("no kproxy container in the example pod")
	}
	wantNative := !strings.Contains(tc.values, "native: false")
	if gotNative := kp.RestartPolicy != nil; gotNative != wantNative {
		t.Errorf("native sidecar %v, want %v", gotNative, wantNative)
	}
	if i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == "app" }); i >= 0 {
		app = &spec.Containers[i]
	} else {
		t.Fatal("no app container in the example pod")
	}
	checkKproxyContainer(t, tc, spec, *kp, cfg)

	// The admin listener (its /config shows user names and the policy) is
	// on the pod's loopback, not the pod's address.
	if host, _, _ := net.SplitHostPort(cfg.Admin.Listen); host != "127.0.0.1" {
		t.Errorf("sidecar admin.listen %q, want 127.0.0.1", cfg.Admin.Listen)
	}
	// kubelet starts the app only after kproxy's startup probe passes.
	if got := probeTarget(kp.StartupProbe, *kp); got != (target{"127.0.0.1", adminPort(t, cfg), "/readyz"}) {
		t.Errorf("kproxy sidecar startup probe %+v, want /readyz", kp.StartupProbe)
	}
	// The app is ready only while kproxy is: its readiness probe is
	// kproxy's /readyz on the loopback the two share.
	if got := probeTarget(app.ReadinessProbe, *app); got != (target{"127.0.0.1", adminPort(t, cfg), "/readyz"}) {
		t.Errorf("app readiness probe %+v, want kproxy's /readyz on 127.0.0.1:%d", app.ReadinessProbe, adminPort(t, cfg))
	}
	wantBootstrap := fmt.Sprintf("localhost:%d", cfg.Listeners.BootstrapPort)
	if !slices.ContainsFunc(app.Env, func(e corev1.EnvVar) bool { return e.Value == wantBootstrap }) ||
		!strings.Contains(strings.Join(app.Args, " "), "-b "+wantBootstrap) {
		t.Errorf("app does not talk to %s: env %v args %v", wantBootstrap, app.Env, app.Args)
	}
}

func isKproxy(c corev1.Container) bool { return c.Name == "kproxy" }

// target is what a probe reaches: host ("" the pod address), port, path.
type target struct {
	host string
	port int
	path string
}

// probeTarget is where a probe of container c goes: an httpGet on the
// pod address, or an exec of a command whose last argument is the URL
// (kproxy probe URL, wget URL).
func probeTarget(p *corev1.Probe, c corev1.Container) target {
	switch {
	case p == nil:
		return target{}
	case p.HTTPGet != nil:
		return target{p.HTTPGet.Host, resolvePort(p.HTTPGet.Port, c), p.HTTPGet.Path}
	case p.Exec != nil && len(p.Exec.Command) > 0:
		u, err := url.Parse(p.Exec.Command[len(p.Exec.Command)-1])
		if err != nil {
			return target{}
		}
		port, _ := strconv.Atoi(u.Port())
		return target{u.Hostname(), port, u.Path}
	}
	return target{}
}

// configSourceName is the name of the Secret (inSecret) or ConfigMap a
// volume mounts, "" when it mounts the other kind.
func configSourceName(v corev1.Volume, inSecret bool) string {
	switch {
	case inSecret && v.Secret != nil:
		return v.Secret.SecretName
	case !inSecret && v.ConfigMap != nil:
		return v.ConfigMap.Name
	}
	return ""
}

// checkKproxyContainer checks the kproxy container of any pod against the
// configuration it will load: ports, probes, mounts, security.
func checkKproxyContainer(t *testing.T, tc chartCase, pod corev1.PodSpec, kp corev1.Container, cfg *config.Config) {
	t.Helper()
	ports := map[string]int{}
	for _, p := range kp.Ports {
		if errs := validation.IsValidPortName(p.Name); len(errs) > 0 {
			t.Errorf("container port name %q: %v", p.Name, errs)
		}
		ports[p.Name] = int(p.ContainerPort)
	}
	want := kafkaPorts(t, tc, cfg)
	// A sidecar's admin listener is on loopback: no port to declare.
	wantHost := "127.0.0.1"
	if tc.mode == "gateway" {
		want["admin"] = adminPort(t, cfg)
		wantHost = ""
	}
	if !maps.Equal(ports, want) {
		t.Errorf("container ports %v, want what kproxy listens on %v", ports, want)
	}
	for _, probe := range []struct {
		name string
		p    *corev1.Probe
		path string
	}{{"readiness", kp.ReadinessProbe, "/readyz"}, {"liveness", kp.LivenessProbe, "/healthz"}} {
		if got, want := probeTarget(probe.p, kp), (target{wantHost, adminPort(t, cfg), probe.path}); got != want {
			t.Errorf("%s probe %+v reaches %+v, want %+v (the admin port)", probe.name, probe.p, got, want)
		}
	}

	// The config file is the ConfigMap mounted as a directory: a subPath
	// mount would never see an update, and the policy would never reload.
	if len(kp.Args) != 2 || kp.Args[0] != "--config" {
		t.Fatalf("kproxy args %v, want --config FILE", kp.Args)
	}
	m := mountOf(t, kp, kp.Args[1])
	if m.SubPath != "" {
		t.Errorf("config mounted with subPath %q: kubelet does not update subPath mounts", m.SubPath)
	}
	if v := volume(t, pod, m.Name); configSourceName(v, tc.configSecret) != fullname {
		t.Errorf("config volume %s is not the rendered configuration %s (in a Secret: %v): %+v", m.Name, fullname, tc.configSecret, v.VolumeSource)
	}
	// Every file the configuration names is in the Secret it should be.
	mounted := map[string]string{}
	for _, file := range configFiles(cfg) {
		m := mountOf(t, kp, file)
		v := volume(t, pod, m.Name)
		if v.Secret == nil {
			t.Errorf("%s is on volume %s, not a Secret", file, m.Name)
			continue
		}
		if len(v.Secret.Items) > 0 && !slices.ContainsFunc(v.Secret.Items, func(k corev1.KeyToPath) bool {
			return filepath.Join(m.MountPath, k.Path) == file
		}) {
			t.Errorf("%s is not among the projected keys %v of Secret %s", file, v.Secret.Items, v.Secret.SecretName)
		}
		mounted[m.Name] = v.Secret.SecretName
	}
	if !maps.Equal(mounted, tc.secrets) {
		t.Errorf("Secrets the config reads %v, want %v", mounted, tc.secrets)
	}
	if (cfg.Policy != nil) != tc.policy {
		t.Errorf("policy loaded %v, want %v", cfg.Policy != nil, tc.policy)
	}

	// Non-root, read-only, no privileges, as the image's numeric user.
	sc, psc := kp.SecurityContext, pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != 65532 {
		t.Errorf("pod security context %+v, want runAsNonRoot as uid 65532 (the image's user)", psc)
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("container security context %+v, want read-only, no escalation, all capabilities dropped", sc)
	}
	// A gateway keeps serving through a preStop sleep while endpoints
	// drop it; the grace period covers that and the drain after.
	preStop := 0
	if tc.mode == "gateway" {
		if kp.Lifecycle == nil || kp.Lifecycle.PreStop == nil || kp.Lifecycle.PreStop.Sleep == nil || kp.Lifecycle.PreStop.Sleep.Seconds < 5 {
			t.Errorf("gateway kproxy lifecycle %+v, want a preStop sleep of at least 5s for endpoint propagation", kp.Lifecycle)
		} else {
			preStop = int(kp.Lifecycle.PreStop.Sleep.Seconds)
		}
	}
	if pod.TerminationGracePeriodSeconds == nil ||
		float64(*pod.TerminationGracePeriodSeconds) <= float64(preStop)+cfg.Limits.ShutdownTimeout.Seconds() {
		t.Errorf("terminationGracePeriodSeconds %v, want more than the preStop sleep %ds + limits.shutdown_timeout %s so SIGTERM can drain",
			pod.TerminationGracePeriodSeconds, preStop, cfg.Limits.ShutdownTimeout)
	}
	// The Go runtime's soft limit follows the container's memory limit.
	if !slices.ContainsFunc(kp.Env, func(e corev1.EnvVar) bool {
		return e.Name == "KPROXY_MEMORY_LIMIT" && e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil &&
			e.ValueFrom.ResourceFieldRef.Resource == "limits.memory" &&
			(e.ValueFrom.ResourceFieldRef.ContainerName == "" || e.ValueFrom.ResourceFieldRef.ContainerName == kp.Name)
	}) {
		t.Errorf("env %+v lacks KPROXY_MEMORY_LIMIT from the container's limits.memory", kp.Env)
	}
	// The memory limit leaves room for what kproxy may buffer
	// (limits.max_buffered_bytes) twice over: decoding and GC headroom.
	mem := kp.Resources.Limits.Memory()
	if mem.IsZero() || mem.Value() < 2*cfg.Limits.MaxBufferedBytes || kp.Resources.Requests.Cpu().IsZero() {
		t.Errorf("resources %+v: want a CPU request and a memory limit of at least 2 x limits.max_buffered_bytes (%d)",
			kp.Resources, cfg.Limits.MaxBufferedBytes)
	}
}

// checkSpread checks the gateway's replicas are spread across nodes and
// zones, each constraint counting the Deployment's own pods.
func checkSpread(t *testing.T, pod corev1.PodTemplateSpec) {
	t.Helper()
	keys := map[string]bool{}
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if c.LabelSelector != nil && selects(c.LabelSelector.MatchLabels, pod.Labels) && c.MaxSkew == 1 {
			keys[c.TopologyKey] = true
		}
	}
	if !keys["kubernetes.io/hostname"] || !keys["topology.kubernetes.io/zone"] {
		t.Errorf("topology spread %+v, want the pods spread across nodes and zones", pod.Spec.TopologySpreadConstraints)
	}
}
