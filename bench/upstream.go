package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// upstream is the cluster every target ends at.
type upstream struct {
	seeds []string // bootstrap addresses
	// brokers are the addresses the cluster advertises in Metadata: what
	// clients dial after bootstrapping, and so what relays listen for.
	brokers []string
	// synthetic is true for the embedded cluster: produce is discarded
	// and every fetch is answered from one canned batch, so the upstream
	// costs little and never runs out of data.
	synthetic bool
	cluster   *kfake.Cluster
}

func (u *upstream) close() {
	if u.cluster != nil {
		u.cluster.Close()
	}
}

// relayTargets is every address a relay must listen for: the advertised
// brokers, and any seed that is not one of them (a load balancer, say).
func (u *upstream) relayTargets() []string {
	out := slices.Clone(u.brokers)
	for _, s := range u.seeds {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// VCPrefix is the kproxy-vc target's topic, group and transactional-id
// prefix: its clients use the bench topic, which is VCPrefix+topic
// upstream.
const VCPrefix = "bench-vc."

// upstreamMaxMessageBytes is the embedded upstream's message.max.bytes.
const upstreamMaxMessageBytes = 4 << 20

// startUpstream starts the embedded synthetic kfake cluster, or connects to
// o.Upstream, makes sure the bench topic exists and lists the brokers.
func startUpstream(ctx context.Context, o *Options) (*upstream, error) {
	if o.Upstream == "" {
		c, err := kfake.NewCluster(
			kfake.NumBrokers(o.Brokers),
			kfake.SeedTopics(int32(o.Partitions), o.Topic, VCPrefix+o.Topic),
			kfake.BlackholeProduce(),
			// Encryption adds a marker header and a GCM tag to every
			// record: a producer batch near the default 1 MiB limit would
			// be refused once encrypted. Every target gets the same room.
			kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(upstreamMaxMessageBytes)}),
			kfake.SyntheticFetch(kfake.SyntheticBatch{RecordBytes: o.RecordBytes}),
		)
		if err != nil {
			return nil, fmt.Errorf("start embedded kfake upstream: %w", err)
		}
		addrs := c.ListenAddrs()
		return &upstream{seeds: addrs, brokers: addrs, synthetic: true, cluster: c}, nil
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(o.Upstream), kgo.DialTimeout(10*time.Second))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("upstream %s metadata: %w", o.Upstream, err)
	}
	u := &upstream{seeds: []string{o.Upstream}}
	for _, b := range md.Brokers {
		u.brokers = append(u.brokers, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))))
	}
	for _, topic := range []string{o.Topic, VCPrefix + o.Topic} { // the second is the kproxy-vc target's
		resp, err := adm.CreateTopic(ctx, int32(o.Partitions), -1, nil, topic)
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return nil, fmt.Errorf("create topic %s: %w", topic, err)
		}
		if resp.Err != nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
			return nil, fmt.Errorf("create topic %s: %w", topic, resp.Err)
		}
	}
	return u, nil
}
