package proxy

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// VirtualClusterLabel labels every series of a virtual cluster's Server,
// and is the field naming it in log lines.
const VirtualClusterLabel = "virtual_cluster"

// WithVirtualCluster makes the Server the engine of virtual cluster name,
// one of several in the process: its connections carry the name
// (filter.Conn.VirtualCluster) and take their ids from connIDs, which
// every virtual cluster's Server shares so that ids stay unique in the
// process. The caller labels the Server's logger and registerer (see
// VirtualClusterRegisterer).
func WithVirtualCluster(name string, connIDs *atomic.Uint64) Option {
	return func(s *Server) {
		s.virtualCluster = name
		s.connIDs = connIDs
	}
}

// VirtualClusterRegisterer registers into reg with every series labelled
// virtual_cluster=name, so that the virtual clusters of one process share
// one registry without their series colliding.
func VirtualClusterRegisterer(reg prometheus.Registerer, name string) prometheus.Registerer {
	return prometheus.WrapRegistererWith(prometheus.Labels{VirtualClusterLabel: name}, reg)
}

// virtualClusterSuffix names the Server's virtual cluster for a message
// that may be about one of several, "" without one.
func (s *Server) virtualClusterSuffix() string {
	if s.virtualCluster == "" {
		return ""
	}
	return " (virtual cluster " + s.virtualCluster + ")"
}
