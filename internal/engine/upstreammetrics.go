package engine

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/labels"
)

// upstreamMetrics count kproxy's connections to the brokers by node id
// ("bootstrap" for the bootstrap servers). Node ids come from the
// cluster's metadata, so the label is bounded by the cluster's size.
type upstreamMetrics struct {
	dials, failures, disconnects *prometheus.CounterVec
	mu                           sync.Mutex
	byNode                       map[int32]*nodeCounters
}

type nodeCounters struct{ dials, failures, disconnects prometheus.Counter }

func newUpstreamMetrics(reg prometheus.Registerer) *upstreamMetrics {
	vec := func(name, help string) *prometheus.CounterVec {
		return newCounterVec(name, help, labels.NodeID)
	}
	m := &upstreamMetrics{
		dials:       vec("kproxy_upstream_dials_total", "Upstream connection attempts, health probes included, by broker node id (\"bootstrap\": the bootstrap servers)."),
		failures:    vec("kproxy_upstream_dial_failures_total", "Failed upstream connection attempts, health probes included, by broker node id (sum them for all nodes)."),
		disconnects: vec("kproxy_upstream_disconnects_total", "Connection pairs ended because the upstream closed its connection, by broker node id."),
		byNode:      map[int32]*nodeCounters{},
	}
	reg.MustRegister(m.dials, m.failures, m.disconnects)
	return m
}

// node returns nodeID's counters, creating them the first time.
func (m *upstreamMetrics) node(nodeID int32) *nodeCounters {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.byNode[nodeID]; ok {
		return c
	}
	label := "bootstrap"
	if nodeID != bootstrapNode {
		label = strconv.Itoa(int(nodeID))
	}
	c := &nodeCounters{m.dials.WithLabelValues(label), m.failures.WithLabelValues(label), m.disconnects.WithLabelValues(label)}
	m.byNode[nodeID] = c
	return c
}
