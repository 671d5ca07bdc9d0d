package rewrite

import (
	"fmt"
	"sync"
)

// proxyHost is the host every test mapper hands out. Upstream hosts in the
// tests all start with upstreamPrefix, so a leak is a plain substring search.
const (
	proxyHost      = "proxy.local"
	proxyPortBase  = 20000
	upstreamPrefix = "10.9.8."
	upstreamPort   = 9092
)

// upstreamHost is the address the fake upstream gives node n.
func upstreamHost(n int32) string { return fmt.Sprintf("%s%d", upstreamPrefix, n) }

// proxyPort is the port fakeMapper hands out for node n.
func proxyPort(n int32) int32 { return proxyPortBase + n }

// mapperCall records one MapBroker invocation.
type mapperCall struct {
	NodeID int32
	Host   string
	Port   int32
}

// fakeMapper maps node N to proxy.local:20000+N, records what it was asked,
// and fails for the node ids in failFor.
type fakeMapper struct {
	failFor map[int32]error

	mu    sync.Mutex
	calls []mapperCall
}

func (m *fakeMapper) MapBroker(nodeID int32, host string, port int32) (string, int32, error) {
	m.mu.Lock()
	m.calls = append(m.calls, mapperCall{nodeID, host, port})
	m.mu.Unlock()
	if err, ok := m.failFor[nodeID]; ok {
		return "", 0, err
	}
	return proxyHost, proxyPort(nodeID), nil
}

func (m *fakeMapper) Calls() []mapperCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]mapperCall(nil), m.calls...)
}

// constMapper is an allocation-free mapper for benchmarks and fuzzing.
type constMapper struct{}

func (constMapper) MapBroker(nodeID int32, _ string, _ int32) (string, int32, error) {
	return proxyHost, proxyPort(nodeID), nil
}
