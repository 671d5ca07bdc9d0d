package proxy

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/labels"
)

// registerBuildInfo registers kproxy_build_info{version, commit,
// go_version} = 1 with reg, the process's unlabelled registerer: it is one
// series per process, however many virtual clusters it serves. Empty
// values are exported as "unknown".
func registerBuildInfo(reg prometheus.Registerer, version, commit string) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kproxy_build_info", Help: "1, labelled with the running binary's version, commit and Go version.",
	}, []string{labels.Version, labels.Commit, labels.GoVersion})
	reg.MustRegister(g)
	g.WithLabelValues(orUnknown(version), orUnknown(commit), runtime.Version()).Set(1)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
