package largemessage

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/labels"
)

// metrics are the filter's series; their names start
// kproxy_large_messages_.
type metrics struct {
	uploaded        prometheus.Counter
	uploadedBytes   prometheus.Counter
	resolved        prometheus.Counter
	resolvedBytes   prometheus.Counter
	failures        *prometheus.CounterVec // operation, reason, topic, partition
	orphansDeleted  prometheus.Counter
	orphansNotFreed prometheus.Counter
}

// The operation label's values.
const (
	opOffload = "offload"
	opResolve = "resolve"
)

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	objects := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kproxy_large_messages_objects_total",
		Help: "Values stored in the object store on produce (offload) and read back on fetch (resolve), by operation.",
	}, []string{labels.Operation})
	bytes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kproxy_large_messages_bytes_total",
		Help: "Bytes of the values stored on produce (offload) and read back on fetch (resolve), by operation.",
	}, []string{labels.Operation})
	orphans := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kproxy_large_messages_orphans_total",
		Help: "Objects of records that were never acknowledged or whose transaction was aborted, by result: success (deleted), or failure (left to the bucket's lifecycle rule).",
	}, []string{labels.Result})
	m := &metrics{
		uploaded:      objects.WithLabelValues(opOffload),
		uploadedBytes: bytes.WithLabelValues(opOffload),
		resolved:      objects.WithLabelValues(opResolve),
		resolvedBytes: bytes.WithLabelValues(opResolve),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_large_messages_failures_total",
			Help: "Partitions refused because a value could not be offloaded or a pointer resolved, by operation, reason, topic (the client's name) and partition; the log line names the offset.",
		}, []string{labels.Operation, labels.Reason, labels.Topic, labels.Partition}),
		orphansDeleted:  orphans.WithLabelValues(labels.Success),
		orphansNotFreed: orphans.WithLabelValues(labels.Failure),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{objects, bytes, orphans, m.failures} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) failed(operation, reason, topic string, partition int32) {
	m.failures.WithLabelValues(operation, reason, topic, strconv.Itoa(int(partition))).Inc()
}
