// Package conformance runs every major Kafka client through kproxy against
// two upstreams and prints a matrix of client × scenario × upstream.
//
// Clients: franz-go, IBM/sarama and segmentio/kafka-go (in-process),
// librdkafka through kcat (Debian's build) and through confluent-kafka for
// Python (test/conformance/clients/confluent_client.py), and the Java client
// through Apache Kafka's own command-line tools (test/kafka/tool.sh).
//
// Upstreams: an in-process kfake cluster (always), and a real Apache Kafka
// cluster when KPROXY_KAFKA_BOOTSTRAP names one (test/kafka/cluster.sh
// starts a 3-node KRaft cluster on loopback). Without it the real-Kafka
// cells are reported SKIP, never PASS. Each upstream gets its own kproxy
// (plaintext) and a second one that terminates TLS and SASL/SCRAM; the real
// cluster also gets two more with that client side that reach its SASL_SSL
// listener over TLS with SCRAM-SHA-512 and with OAUTHBEARER
// (upstream_security_test.go; `test/kafka/cluster.sh env` names it).
//
// The matrix is printed at the end of the run and, when KPROXY_MATRIX_OUT
// is set, written there as Markdown. KPROXY_CONFORMANCE_UPSTREAMS limits a
// run to some upstreams, and KPROXY_MATRIX_CELLS carries cell results from
// one run to the next (cellsfile_test.go). docs/compatibility.md explains
// the scenarios and holds the matrix of a real run.
//
// The package has only tests; this file holds its documentation.
package conformance
