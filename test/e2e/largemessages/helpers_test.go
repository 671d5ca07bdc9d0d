// Package e2elargemessages runs the kproxy binary with large message
// offload in front of a kfake cluster, with SeaweedFS as the object store.
package e2elargemessages

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/largemessage/pointer"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/seaweed"
)

// The client settings docs/large-messages.md gives franz-go for records
// of up to 64 MiB through kproxy.
func producerSizes() []kgo.Opt {
	return []kgo.Opt{kgo.ProducerBatchMaxBytes(64 << 20), kgo.BrokerMaxWriteBytes(100 << 20)}
}

func consumerSizes() []kgo.Opt {
	return []kgo.Opt{kgo.FetchMaxBytes(64 << 20), kgo.FetchMaxPartitionBytes(64 << 20), kgo.BrokerMaxReadBytes(128 << 20)}
}

// env is a kfake cluster, SeaweedFS, and kproxy offloading in front of
// the cluster.
type env struct {
	t       *testing.T
	cluster *kfake.Cluster
	store   *seaweed.Server
	kp      *testkit.Binary
}

// newEnv starts the cluster with topics, SeaweedFS, and kproxy with the
// sections (YAML, the store's endpoint written as ENDPOINT).
func newEnv(t *testing.T, topics []string, sections string) *env {
	t.Helper()
	e := &env{t: t, store: seaweed.Start(t)}
	creds, err := seaweed.Credentials().Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// kproxy reads the credentials from the environment, as in production.
	t.Setenv("AWS_ACCESS_KEY_ID", creds.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", creds.SecretAccessKey)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	e.cluster = testkit.Cluster(t, 1, kfake.SeedTopics(1, topics...))
	sections = strings.ReplaceAll(sections, "ENDPOINT", e.store.Endpoint())
	text := testkit.Config{Upstream: e.cluster.ListenAddrs(), Admin: true, Log: "{level: info, format: json}", Extra: sections}.YAML()
	e.kp = testkit.RunBinary(t, testkit.SharedKproxy(t), testkit.WriteConfig(t, text))
	e.kp.LogFilterOnFailure("large_messages")
	return e
}

// section is a large_messages section for the test's SeaweedFS with
// topic rules (YAML list items) and further keys.
func section(rules, more string) string {
	return fmt.Sprintf(`
large_messages:
  store:
    s3: {endpoint: "ENDPOINT", bucket: %s, region: %s, path_style: true}
  topics:
%s
%s`, seaweed.Bucket, seaweed.Region, rules, more)
}

// proxied is a client of kproxy; direct one of the cluster itself.
func (e *env) proxied(opts ...kgo.Opt) *kgo.Client {
	base := append([]kgo.Opt{kgo.SeedBrokers(e.kp.Bootstrap)}, producerSizes()...)
	return testkit.Client(e.t, append(append(base, consumerSizes()...), opts...)...)
}

func (e *env) direct(opts ...kgo.Opt) *kgo.Client {
	return testkit.Client(e.t, append([]kgo.Opt{kgo.SeedBrokers(e.cluster.ListenAddrs()...)}, opts...)...)
}

// ctx is a test's deadline for one step.
func (e *env) ctx() context.Context { return testkit.Context(e.t, 90*time.Second) }

// metric is one series of kproxy's /metrics, 0 when absent.
func (e *env) metric(series string) float64 {
	v, _ := testkit.ScrapeSeries(e.t, e.kp.Admin, series)
	return v
}

// objects lists the keys in the bucket under prefix.
func (e *env) objects(prefix string) []string {
	e.t.Helper()
	out, err := e.store.Admin.ListObjectsV2(e.ctx(), &s3.ListObjectsV2Input{Bucket: aws.String(seaweed.Bucket), Prefix: aws.String(prefix)})
	if err != nil {
		e.t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

// value is size pseudo-random bytes (incompressible), different per seed.
func value(seed uint64, size int) []byte {
	r := rand.New(rand.NewPCG(seed, size64(size)))
	b := make([]byte, size)
	for i := 0; i+8 <= size; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

func size64(n int) uint64 { return uint64(n) }

// digest is a value's SHA-256, for comparing without printing megabytes.
func digest(b []byte) [32]byte { return sha256.Sum256(b) }

// decodePointer fails the test unless r's value is a pointer.
func decodePointer(t *testing.T, r *kgo.Record) pointer.Pointer {
	t.Helper()
	if !pointer.Detect(r.Value) {
		t.Fatalf("record %s/%d@%d: value of %d bytes is not a pointer", r.Topic, r.Partition, r.Offset, len(r.Value))
	}
	p, err := pointer.Decode(r.Value)
	if err != nil {
		t.Fatalf("record %s/%d@%d: %v", r.Topic, r.Partition, r.Offset, err)
	}
	return p
}
