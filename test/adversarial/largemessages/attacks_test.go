package largemessages

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/largemessage/pointer"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/seaweed"
)

// Two tenants share one bucket through the top-level section; each
// virtual cluster's objects are under its own name.
const tenants = `listeners: {bind_host: 127.0.0.1}
large_messages:
  store:
    s3: {endpoint: "ENDPOINT", bucket: ` + seaweed.Bucket + `, region: ` + seaweed.Region + `, path_style: true}
  topics: [{match: "*", threshold_bytes: 1048576}]
virtual_clusters:
  - name: teama
    topic_prefix: teama.
    group_prefix: teama.
    transactional_id_prefix: teama.
    listeners: {bootstrap_port: 0, broker_port_base: 0}
  - name: teamb
    topic_prefix: teamb.
    group_prefix: teamb.
    transactional_id_prefix: teamb.
    listeners: {bootstrap_port: 0, broker_port_base: 0}
`

// TestForgedPointersAreNotResolved: tenant B offloads a secret value;
// tenant A, who can write records, writes pointers to have kproxy fetch
// what it must not: B's object (with its true size and SHA-256, read by
// anyone with access to the brokers), an object of another bucket, a key
// under A's prefix that climbs out of it; and pointers to A's own object
// claiming a huge size or another SHA-256. Each partition gets
// INVALID_RECORD, never a value, and kproxy asks the store for no object
// outside A's prefix.
func TestForgedPointersAreNotResolved(t *testing.T) {
	store := seaweed.Start(t)
	creds, err := seaweed.Credentials().Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", creds.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", creds.SecretAccessKey)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	attacks := []string{"steal", "bucket", "climb", "huge", "tamper"}
	var topics []string
	for _, a := range append([]string{"src"}, attacks...) {
		topics = append(topics, "teama."+a, "teamb."+a)
	}
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, topics...))
	text := fmt.Sprintf("upstream: {bootstrap_servers: [%q]}\nadmin: {listen: \"127.0.0.1:0\"}\nlog: {level: info, format: json}\n%s",
		cluster.ListenAddrs()[0], strings.ReplaceAll(tenants, "ENDPOINT", store.Endpoint()))
	kp := testkit.RunBinary(t, testkit.SharedKproxy(t), testkit.WriteConfig(t, text))
	ctx := testkit.Context(t, 90*time.Second)
	client := func(vc string, opts ...kgo.Opt) *kgo.Client {
		return testkit.Client(t, append([]kgo.Opt{kgo.SeedBrokers(kp.VirtualClusterBootstrap(vc)), kgo.ProducerBatchMaxBytes(8 << 20)}, opts...)...)
	}
	direct := testkit.Client(t, kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("teama.src", "teamb.src"))
	secret, own := make([]byte, 2<<20), make([]byte, 2<<20)
	copy(secret, "tenant b's secret")
	copy(own, "tenant a's own value")
	if err := client("teamb").ProduceSync(ctx, &kgo.Record{Topic: "src", Value: secret}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := client("teama").ProduceSync(ctx, &kgo.Record{Topic: "src", Value: own}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	ptrs := map[string]pointer.Pointer{}
	for len(ptrs) < 2 {
		fs := direct.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("the pointers never reached the cluster")
		}
		fs.EachRecord(func(r *kgo.Record) {
			p, err := pointer.Decode(r.Value)
			if err != nil {
				t.Fatalf("%s: %v", r.Topic, err)
			}
			ptrs[r.Topic] = p
		})
	}
	theirs, mine := ptrs["teamb.src"], ptrs["teama.src"]
	if !strings.HasPrefix(theirs.Key, "teamb/src/") || !strings.HasPrefix(mine.Key, "teama/src/") {
		t.Fatalf("object keys %s and %s: want each under its tenant's name", theirs.Key, mine.Key)
	}
	forged := map[string]pointer.Pointer{"steal": theirs}
	other := mine
	other.Bucket = "another-bucket"
	forged["bucket"] = other
	climb := theirs
	climb.Key = "teama/../" + theirs.Key
	forged["climb"] = climb
	huge := mine
	huge.Size = 1 << 50
	forged["huge"] = huge
	tamper := mine
	tamper.SHA256 = strings.Repeat("0", 64)
	forged["tamper"] = tamper
	for _, attack := range attacks {
		v, err := pointer.Encode(forged[attack])
		if err != nil {
			t.Fatal(err)
		}
		if err := client("teama").ProduceSync(ctx, &kgo.Record{Topic: attack, Value: v}).FirstErr(); err != nil {
			t.Fatalf("%s: producing the forged pointer: %v", attack, err)
		}
	}
	for _, attack := range attacks {
		cl := client("teama", kgo.ConsumeTopics(attack))
		err := firstFetchError(t, ctx, cl)
		if !errors.Is(err, kerr.InvalidRecord) {
			t.Errorf("%s: fetch error %v, want INVALID_RECORD", attack, err)
		}
		cl.Close()
	}
	for attack, reason := range map[string]string{"steal": "foreign_object", "bucket": "foreign_object", "climb": "foreign_object", "huge": "mismatch", "tamper": "mismatch"} {
		series := fmt.Sprintf(`kproxy_large_messages_failures_total{operation="resolve",partition="0",reason=%q,topic=%q,virtual_cluster="teama"}`, reason, attack)
		if v, _ := testkit.ScrapeSeries(t, kp.Admin, series); v < 1 {
			t.Errorf("%s: no %s", attack, series)
		}
	}
	// The honest reader of A's own pointer still gets its value.
	got := client("teama", kgo.ConsumeTopics("src")).PollFetches(ctx).Records()
	if len(got) != 1 || string(got[0].Value[:20]) != "tenant a's own value" {
		t.Errorf("tenant A's own record: %d records", len(got))
	}
}

// firstFetchError polls cl until a fetch error, failing on a record.
func firstFetchError(t *testing.T, ctx context.Context, cl *kgo.Client) error {
	t.Helper()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("no fetch error: %v", err)
		}
		if rs := fs.Records(); len(rs) > 0 {
			t.Fatalf("consumer got a record of %d bytes from %s, want an error", len(rs[0].Value), rs[0].Topic)
		}
		for _, fe := range fs.Errors() {
			return fe.Err
		}
	}
}
