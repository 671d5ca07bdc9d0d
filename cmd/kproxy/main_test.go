package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

func TestValidateNamesBadKey(t *testing.T) {
	path := testkit.WriteConfig(t, "upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\nlisteners: {bind_host: 0.0.0.0, bootstrap_prot: 1}\n")
	var stdout, stderr bytes.Buffer
	if code := runArgs([]string{"validate", "--config", path}, &stdout, &stderr); code == 0 {
		t.Fatalf("validate accepted a bad file; stdout %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), `unknown key "bootstrap_prot"`) {
		t.Errorf("stderr %q does not name the unknown key", stderr.String())
	}

	stderr.Reset()
	if code := runArgs([]string{"validate", "--config", "../../configs/example.yaml"}, &stdout, &stderr); code != 0 {
		t.Errorf("example config rejected: %s", stderr.String())
	}
}

// TestBinaryServesEmbeddedClusterAndDrainsOnSIGTERM runs the real binary
// the way the README's quick start does, produces and consumes through it,
// and stops it with SIGTERM.
func TestBinaryServesEmbeddedClusterAndDrainsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	cfg := testkit.WriteConfig(t, `
upstream: {embedded: {brokers: 3, topics: [demo]}}
listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
`)
	kp := testkit.RunBinary(t, testkit.BuildKproxy(t), cfg)
	bootstrap, admin := kp.Bootstrap, kp.Admin
	kp.WaitReady()

	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic("demo"),
		kgo.ConsumeTopics("demo"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte("k"), Value: []byte("through the binary")}).FirstErr(); err != nil {
		t.Fatalf("produce through kproxy: %v", err)
	}
	fetches := cl.PollFetches(ctx)
	if errs := fetches.Errors(); len(errs) > 0 {
		t.Fatalf("consume through kproxy: %v", errs)
	}
	if recs := fetches.Records(); len(recs) != 1 || string(recs[0].Value) != "through the binary" {
		t.Fatalf("consumed %d records, want the one produced", len(recs))
	}

	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`kproxy_requests_total{api="Produce",version=`, `kproxy_connections_total{listener="bootstrap"}`} {
		if !bytes.Contains(metrics, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	lines, err := kp.Stop()
	if err != nil {
		t.Errorf("kproxy exited with %v after SIGTERM", err)
	}
	if !slices.ContainsFunc(lines, func(l testkit.LogLine) bool { return l.Message() == "shut down cleanly" }) {
		t.Error("kproxy did not log a clean shutdown")
	}
}
