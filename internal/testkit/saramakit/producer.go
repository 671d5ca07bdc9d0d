package saramakit

import (
	"testing"

	"github.com/IBM/sarama"
)

// Producer is a sarama client of addrs with cfg and a synchronous
// producer on it, both closed (the producer first) when the test ends.
func Producer(t testing.TB, addrs []string, cfg *sarama.Config) (sarama.Client, sarama.SyncProducer) {
	t.Helper()
	client, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		t.Fatalf("sarama client: %v", err)
	}
	t.Cleanup(func() { client.Close() })
	producer, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { producer.Close() })
	return client, producer
}
