package engine

import "sync/atomic"

// WithVirtualCluster makes the Server the engine of virtual cluster name,
// one of several in the process: its connections carry the name
// (filter.Conn.VirtualCluster) and take their ids from connIDs, which
// every virtual cluster's Server shares so that ids stay unique in the
// process. The caller labels the Server's logger and registerer (a
// virtual_cluster field and label) so that the clusters' log lines and
// series stay apart.
func WithVirtualCluster(name string, connIDs *atomic.Uint64) Option {
	return func(s *Server) {
		s.virtualCluster = name
		s.connIDs = connIDs
	}
}

// virtualClusterSuffix names the Server's virtual cluster for a message
// that may be about one of several, "" without one.
func (s *Server) virtualClusterSuffix() string {
	if s.virtualCluster == "" {
		return ""
	}
	return " (virtual cluster " + s.virtualCluster + ")"
}
