// Package embedded runs an in-memory Kafka cluster (franz-go's kfake) on
// loopback so kproxy can be tried with nothing else running. It keeps data
// in memory only and is not a production broker.
package embedded

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kproxy/kproxy/internal/config"
)

// Start starts a cluster as cfg describes and returns it with the addresses
// of its brokers. The caller closes it.
func Start(cfg config.Embedded) (*kfake.Cluster, []string, error) {
	opts := []kfake.Opt{
		kfake.NumBrokers(cfg.Brokers),
		kfake.DefaultNumPartitions(cfg.DefaultPartitions),
		kfake.AllowAutoTopicCreation(),
	}
	if len(cfg.Topics) > 0 {
		opts = append(opts, kfake.SeedTopics(int32(cfg.DefaultPartitions), cfg.Topics...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("start embedded cluster: %w", err)
	}
	return c, c.ListenAddrs(), nil
}
