package proxy

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/engine"
)

// Started describes a kproxy that Run has started: every listener and
// the admin endpoint are bound (so a configuration asking for port 0 can
// learn the ports the system chose), though kproxy may not be ready yet.
// Options.Started receives it; its methods may be called until Run
// returns.
type Started struct {
	servers []*engine.Server
	names   []string // each server's virtual cluster, "" without virtual_clusters
	admin   string
	metrics prometheus.Gatherer
}

func newStarted(cfg *config.Config, servers []*engine.Server, admin string, metrics prometheus.Gatherer) Started {
	clusters := cfg.Clusters()
	names := make([]string, len(clusters))
	for i, cl := range clusters {
		names[i] = cl.Name
	}
	return Started{servers: servers, names: names, admin: admin, metrics: metrics}
}

// BootstrapAddr is the bound address of the bootstrap listener: the first
// virtual cluster's with virtual_clusters (see VirtualClusterBootstrapAddr);
// "" when listeners.port_per_broker is off.
func (s Started) BootstrapAddr() string { return s.servers[0].BootstrapAddr() }

// VirtualClusterBootstrapAddr is the bound address of virtual cluster
// name's bootstrap listener, "" if there is no such virtual cluster.
func (s Started) VirtualClusterBootstrapAddr(name string) string {
	for i, n := range s.names {
		if n == name {
			return s.servers[i].BootstrapAddr()
		}
	}
	return ""
}

// BrokerAddr is the address clients are told for broker nodeID (the first
// virtual cluster's, with virtual_clusters), false until kproxy has
// learnt of that broker.
func (s Started) BrokerAddr(nodeID int32) (string, bool) { return s.servers[0].BrokerAddr(nodeID) }

// SNIAddr is the bound address of listeners.sni, "" if it is not set.
func (s Started) SNIAddr() string { return s.servers[0].SNIAddr() }

// SNIBrokerAddr is the address clients of listeners.sni are told for
// broker nodeID, false until kproxy has learnt of that broker.
func (s Started) SNIBrokerAddr(nodeID int32) (string, bool) {
	return s.servers[0].SNIBrokerAddr(nodeID)
}

// AdminAddr is the bound address of the admin endpoint, "" if admin.listen
// is not set.
func (s Started) AdminAddr() string { return s.admin }

// Metrics gathers the metrics the admin endpoint serves at /metrics.
func (s Started) Metrics() prometheus.Gatherer { return s.metrics }

// Ready reports whether every cluster kproxy serves is ready, as /readyz
// does.
func (s Started) Ready() bool {
	for _, srv := range s.servers {
		if !srv.Ready() {
			return false
		}
	}
	return true
}

// WaitReady blocks until every cluster kproxy serves is ready or ctx ends.
func (s Started) WaitReady(ctx context.Context) error {
	for i, srv := range s.servers {
		if err := srv.WaitReady(ctx); err != nil {
			if s.names[i] != "" {
				return fmt.Errorf("virtual cluster %s: %w", s.names[i], err)
			}
			return err
		}
	}
	return nil
}

// adminAddr is admin's bound address, "" when there is no admin endpoint.
func adminAddr(admin *http.Server) string {
	if admin == nil {
		return ""
	}
	return admin.Addr
}
