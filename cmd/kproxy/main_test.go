package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestValidateNamesBadKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(path, []byte("upstream: {bootstrap_servers: [\"127.0.0.1:9092\"]}\nlisteners: {bind_host: 0.0.0.0, bootstrap_prot: 1}\n"), 0o600)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"validate", "--config", path}, &stdout, &stderr); code == 0 {
		t.Fatalf("validate accepted a bad file; stdout %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), `unknown key "bootstrap_prot"`) {
		t.Errorf("stderr %q does not name the unknown key", stderr.String())
	}

	stderr.Reset()
	if code := run([]string{"validate", "--config", "../../configs/example.yaml"}, &stdout, &stderr); code != 0 {
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
	dir := t.TempDir()
	bin := filepath.Join(dir, "kproxy")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "kproxy.yaml")
	os.WriteFile(cfg, []byte(`
upstream: {embedded: {brokers: 3, topics: [demo]}}
listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
`), 0o600)

	cmd := exec.Command(bin, "--config", cfg)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	// The JSON log says where the listeners are.
	lines := make(chan map[string]any, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	var bootstrap, admin string
	var sawCleanShutdown bool
	deadline := time.After(20 * time.Second)
	for bootstrap == "" || admin == "" {
		select {
		case m := <-lines:
			if m["listener"] == "bootstrap" {
				bootstrap, _ = m["addr"].(string)
			}
			if strings.HasPrefix(m["message"].(string), "admin endpoint") {
				admin, _ = m["addr"].(string)
			}
		case <-deadline:
			t.Fatal("kproxy did not log its listener addresses")
		}
	}

	waitReady(t, "http://"+admin+"/readyz")

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
	for _, want := range []string{`kproxy_requests_total{api="Produce"}`, `kproxy_connections_total{listener="bootstrap"}`} {
		if !bytes.Contains(metrics, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() {
		for m := range lines {
			if m["message"] == "shut down cleanly" {
				sawCleanShutdown = true
			}
		}
		exited <- cmd.Wait()
	}()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("kproxy exited with %v after SIGTERM", err)
		}
		if !sawCleanShutdown {
			t.Error("kproxy did not log a clean shutdown")
		}
	case <-time.After(40 * time.Second):
		t.Fatal("kproxy did not exit after SIGTERM")
	}
}

func waitReady(t *testing.T, url string) {
	t.Helper()
	for i := 0; i < 200; i++ {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never returned 200", url)
}
