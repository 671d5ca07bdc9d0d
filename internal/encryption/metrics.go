package encryption

import (
	"errors"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/kms"
)

// metrics are the filter's series; their names start kproxy_encryption_.
type metrics struct {
	encrypted prometheus.Counter
	decrypted prometheus.Counter
	failures  *prometheus.CounterVec // operation, reason, topic, partition
	kmsCalls  *prometheus.CounterVec // operation, outcome
}

// The operation label's values.
const (
	opEncrypt = "encrypt"
	opDecrypt = "decrypt"

	kmsGenerateDataKey = "generate_data_key"
	kmsDecrypt         = "decrypt"
)

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	records := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kproxy_encryption_records_total",
		Help: "Records encrypted on produce and decrypted on fetch, by operation.",
	}, []string{"operation"})
	m := &metrics{
		encrypted: records.WithLabelValues(opEncrypt),
		decrypted: records.WithLabelValues(opDecrypt),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_encryption_failures_total",
			Help: "Partitions refused because their records could not be encrypted or decrypted, by operation, reason, topic (the client's name) and partition; the log line names the offset.",
		}, []string{"operation", "reason", "topic", "partition"}),
		kmsCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_encryption_kms_calls_total",
			Help: "Calls to the KMS, by operation (generate_data_key, decrypt) and outcome (ok, key_unavailable, retriable, rejected).",
		}, []string{"operation", "outcome"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{records, m.failures, m.kmsCalls} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) failed(operation, reason, topic string, partition int32) {
	m.failures.WithLabelValues(operation, reason, topic, strconv.Itoa(int(partition))).Inc()
}

// outcome is a KMS error's class as the outcome label says it.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, kms.ErrKeyUnavailable):
		return "key_unavailable"
	case errors.Is(err, kms.ErrRetriable):
		return "retriable"
	}
	return "rejected"
}
