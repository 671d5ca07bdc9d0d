package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/proxy"
)

const upstreamOnly = "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\n"

// TestSectionValidated: kproxy validates the require_header section
// where it is written, at the top level and in a virtual cluster, naming
// each invalid key in full; a file with the section is invalid for a
// kproxy without the plugin, as any unknown key is.
func TestSectionValidated(t *testing.T) {
	vc := "virtual_clusters: [{name: a, listeners: {bootstrap_port: 0}, require_header: %s}]\n"
	for _, tc := range []struct {
		name, file string
		plugins    []filter.Plugin
		want       []string // each in the error; none: valid
	}{
		{"valid", upstreamOnly + "require_header: {name: trace-id, topics: [orders, \"pay-*\"]}", []filter.Plugin{Plugin()}, nil},
		{"valid in a virtual cluster", upstreamOnly + fmt.Sprintf(vc, "{name: owner}"), []filter.Plugin{Plugin()}, nil},
		{"unknown key in the section", upstreamOnly + "require_header: {name: trace-id, topic: [orders]}", []filter.Plugin{Plugin()},
			[]string{`require_header.topic: unknown key "topic"`}},
		{"missing name, bad glob", upstreamOnly + "require_header: {topics: [\"[a\"]}", []filter.Plugin{Plugin()},
			[]string{"require_header.name: required", `require_header.topics[0]: "[a" is not a topic name or glob`}},
		{"wrong type", upstreamOnly + "require_header: {name: [a, b]}", []filter.Plugin{Plugin()},
			[]string{"require_header.name: cannot use"}},
		{"unknown key in a virtual cluster's section", upstreamOnly + fmt.Sprintf(vc, "{name: owner, nmae: x}"), []filter.Plugin{Plugin()},
			[]string{`virtual_clusters[0].require_header.nmae: unknown key "nmae"`}},
		{"invalid in a virtual cluster", upstreamOnly + fmt.Sprintf(vc, "{topics: [orders]}"), []filter.Plugin{Plugin()},
			[]string{"virtual_clusters[0].require_header.name: required"}},
		{"no plugin claims it", upstreamOnly + "require_header: {name: trace-id}", nil,
			[]string{`require_header: unknown key "require_header"`}},
		{"a key no plugin claims in a virtual cluster", upstreamOnly + fmt.Sprintf(vc, "{name: owner}"), nil,
			[]string{`virtual_clusters[0].require_header: unknown key "require_header"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := proxy.Validate(proxy.Options{ConfigPath: testkit.WriteConfig(t, tc.file), Plugins: tc.plugins, SkipFileChecks: true})
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error naming %q, got none", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestSectionPerVirtualClusterAndReload: two virtual clusters on one
// kfake. Team a inherits the top level's section (every topic needs
// trace-id); team b sets its own (its orders topic needs owner, other
// topics nothing). After the file changes b's section and kproxy gets a
// reload request, b's filter applies the new section without a restart.
func TestSectionPerVirtualClusterAndReload(t *testing.T) {
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "a.orders", "b.orders", "b.audit"))
	file := func(bSection string) string {
		return fmt.Sprintf(`upstream: {bootstrap_servers: [%q]}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
require_header: {name: trace-id}
virtual_clusters:
  - {name: a, topic_prefix: a., group_prefix: a., transactional_id_prefix: a., listeners: {bootstrap_port: 0, broker_port_base: 0}}
  - {name: b, topic_prefix: b., group_prefix: b., transactional_id_prefix: b., listeners: {bootstrap_port: 0, broker_port_base: 0},
     require_header: %s}
`, cluster.ListenAddrs()[0], bSection)
	}
	path := testkit.WriteConfig(t, file("{name: owner, topics: [orders]}"))
	reload := make(chan os.Signal, 1)
	kp := testkit.ServeInProcess(t, func(ctx context.Context, log io.Writer) error {
		return proxy.Run(ctx, proxy.Options{ConfigPath: path, Plugins: []filter.Plugin{Plugin()}, LogOutput: log, Reload: reload})
	})
	kp.WaitReady()
	a, b := kp.VirtualClusterBootstrap("a"), kp.VirtualClusterBootstrap("b")

	for _, step := range []struct {
		bootstrap, topic string
		headers          []string
		refused          bool
	}{
		{a, "orders", nil, true},
		{a, "orders", []string{"trace-id"}, false},
		{b, "orders", []string{"trace-id"}, true},
		{b, "orders", []string{"owner"}, false},
		{b, "audit", nil, false},
	} {
		checkProduce(t, step.bootstrap, step.topic, step.headers, step.refused)
	}

	if err := os.WriteFile(path, []byte(file("{name: trace-id}")), 0o600); err != nil {
		t.Fatal(err)
	}
	reload <- nil
	kp.WaitLog("b's section reloaded", func(l testkit.LogLine) bool {
		return l.Message() == "section reloaded" && l["virtual_cluster"] == "b"
	})
	checkProduce(t, b, "orders", []string{"owner"}, true)
	checkProduce(t, b, "audit", nil, true)
	checkProduce(t, b, "audit", []string{"trace-id"}, false)
}

// checkProduce produces one record with headers to topic through
// bootstrap and checks that it is refused with INVALID_RECORD, or stored.
func checkProduce(t *testing.T, bootstrap, topic string, headers []string, wantRefused bool) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := &kgo.Record{Topic: topic, Value: []byte("v")}
	for _, h := range headers {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: h, Value: []byte("x")})
	}
	err = cl.ProduceSync(ctx, r).FirstErr()
	switch refused := errors.Is(err, kerr.InvalidRecord); {
	case refused != wantRefused:
		t.Errorf("produce to %s with headers %q: err %v, want refused %v", topic, headers, err, wantRefused)
	case !refused && err != nil:
		t.Errorf("produce to %s with headers %q: %v", topic, headers, err)
	}
}
