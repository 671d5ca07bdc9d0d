package e2esni

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/saramakit"
)

// saramaDialer is sarama's proxy dialer (Net.Proxy), doing the TLS
// handshake itself so the names of the SNI listener resolve to loopback.
type saramaDialer struct {
	dial func(ctx context.Context, network, host string) (net.Conn, error)
}

func (d saramaDialer) Dial(network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return d.dial(ctx, network, addr)
}

// TestSNISarama: sarama produces and consumes over the SNI listener, and is
// only ever told names of the pattern at the SNI port.
func TestSNISarama(t *testing.T) {
	t.Parallel()
	const topic = "sni-sarama"
	cluster := testkit.Cluster(t, 3, kfake.SeedTopics(3, topic))
	p := newPKI(t)
	px := kproxytest.Start(t, sniYAML(cluster, p, yamlOpts{listeners: "  port_per_broker: false"}))
	port := sniPort(t, px)
	sniffer := testkit.NewSniffer()

	cfg := sarama.NewConfig()
	cfg.ClientID = "kproxy-e2esni-sarama"
	cfg.Version = sarama.V3_6_0_0
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewRoundRobinPartitioner
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	cfg.Net.Proxy.Enable = true
	cfg.Net.Proxy.Dialer = saramaDialer{dial: sniDialer(port, clientTLS(p), sniffer)}
	client, producer := saramakit.Producer(t, []string{net.JoinHostPort(bootstrapHost, strconv.Itoa(port))}, cfg)
	const n = 30
	for i := range n {
		if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("v" + strconv.Itoa(i))}); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	got := 0
	for part := int32(0); part < 3; part++ {
		pc, err := consumer.ConsumePartition(topic, part, sarama.OffsetOldest)
		if err != nil {
			t.Fatalf("consume partition %d: %v", part, err)
		}
		hw := pc.HighWaterMarkOffset()
		for got < n && hw > 0 {
			select {
			case m := <-pc.Messages():
				got++
				if m.Offset+1 >= hw {
					hw = 0
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("partition %d: %d of %d records consumed", part, got, n)
			}
		}
		pc.Close()
	}
	if got != n {
		t.Fatalf("consumed %d records, want %d", got, n)
	}
	// sarama asks FindCoordinator only for groups; Metadata carries the
	// addresses here.
	checkSNIAddrs(t, sniffer, port)
}
