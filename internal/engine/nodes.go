package engine

import (
	"errors"
	"fmt"
	"sync"
)

// bootstrapNode marks a connection for the bootstrap servers, which
// serves no single node.
const bootstrapNode = int32(-1)

// errShuttingDown: a node reported after Shutdown closed the listeners.
var errShuttingDown = errors.New("kproxy is shutting down")

// nodeTable is every upstream node the cluster has reported, by id, with
// the address it advertises: where a pair routed to the node dials.
type nodeTable struct {
	mu       sync.Mutex
	upstream map[int32]string
	closed   bool
}

func newNodeTable() *nodeTable { return &nodeTable{upstream: map[int32]string{}} }

// record sets nodeID's upstream address once announce, told of it while
// the table is locked, succeeded: a node is routable only once every
// listener serves it, and no lookup sees it halfway.
func (t *nodeTable) record(nodeID int32, upstream string, announce func() error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("node %d: %w", nodeID, errShuttingDown)
	}
	if err := announce(); err != nil {
		return err
	}
	t.upstream[nodeID] = upstream
	return nil
}

// upstreamFor returns the upstream address of nodeID, if known.
func (t *nodeTable) upstreamFor(nodeID int32) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	addr, ok := t.upstream[nodeID]
	return addr, ok
}

// ids lists the nodes seen so far.
func (t *nodeTable) ids() []int32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]int32, 0, len(t.upstream))
	for id := range t.upstream {
		ids = append(ids, id)
	}
	return ids
}

func (t *nodeTable) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.upstream)
}

// close refuses new nodes: kproxy is shutting down.
func (t *nodeTable) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
}
