package engine

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"time"
)

// brokerErrors remembers each node's last failed upstream dial, for
// /brokers.
type brokerErrors struct {
	mu     sync.Mutex
	byNode map[int32]brokerError
}

type brokerError struct {
	err string
	at  time.Time
}

// record keeps err as nodeID's last error; a nil err changes nothing.
func (b *brokerErrors) record(nodeID int32, err error) {
	if err == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byNode == nil {
		b.byNode = map[int32]brokerError{}
	}
	b.byNode[nodeID] = brokerError{err: err.Error(), at: time.Now()}
}

func (b *brokerErrors) last(nodeID int32) (brokerError, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.byNode[nodeID]
	return e, ok
}

// BrokerStatus is one upstream node as /brokers reports it.
type BrokerStatus struct {
	NodeID int32 `json:"node_id"`
	// Upstream is the broker's address as the cluster advertises it;
	// Advertised the address kproxy tells clients.
	Upstream   string `json:"upstream_address"`
	Advertised string `json:"advertised_address"`
	// Listening is false while kproxy closed the node's listener because
	// its upstream is down.
	Listening   bool `json:"listening"`
	Connections int  `json:"connections"`
	// LastError is the last failed dial to the node, and when; empty if
	// none failed.
	LastError   string     `json:"last_error,omitempty"`
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`
}

// Brokers reports every upstream node kproxy has seen, by node id, with
// the client connections its listener serves now.
func (s *Server) Brokers() []BrokerStatus {
	conns := map[int32]int{}
	s.mu.Lock()
	for p := range s.pairs {
		conns[p.nodeID]++
	}
	s.mu.Unlock()
	out := s.nodeStatuses()
	for i := range out {
		b := &out[i]
		b.Connections = conns[b.NodeID]
		if e, ok := s.brokerErrors.last(b.NodeID); ok {
			b.LastError, b.LastErrorAt = e.err, &e.at
		}
	}
	slices.SortFunc(out, func(a, b BrokerStatus) int { return int(a.NodeID) - int(b.NodeID) })
	return out
}

// nodeStatuses lists the nodes' addresses, for Server.Brokers: the
// advertised address is the first listener's that has one (the port-per-broker one
// when there is one).
func (s *Server) nodeStatuses() []BrokerStatus {
	ids := s.nodes.ids()
	out := make([]BrokerStatus, 0, len(ids))
	for _, id := range ids {
		b := BrokerStatus{NodeID: id}
		b.Upstream, _ = s.nodes.upstreamFor(id)
		for _, l := range s.listeners {
			if a, ok := l.advertised(id); ok {
				b.Advertised, b.Listening = a.String(), a.listening
				break
			}
		}
		out = append(out, b)
	}
	return out
}

func (s *Server) serveBrokers(w http.ResponseWriter, _ *http.Request) { writeJSON(w, s.Brokers()) }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
