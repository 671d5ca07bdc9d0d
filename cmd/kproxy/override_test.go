package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// overrideFile is a configuration whose listeners the tests override.
func overrideFile(t *testing.T, upstream string) string {
	return testkit.WriteConfig(t, testkit.LocalConfig(upstream))
}

// TestOverridesChangeWhatKproxyBindsAndAdvertises runs kproxy with its
// bind host and advertised host from the environment and its ports from
// flags (one of them shadowing a variable), and checks through a real
// client what it binds and what its Metadata tells clients.
func TestOverridesChangeWhatKproxyBindsAndAdvertises(t *testing.T) {
	const bindHost, advertised = "127.0.0.2", "kproxy.test"
	cluster := testkit.Cluster(t, 3, kfake.SeedTopics(1, "containers"))
	// One run of four ports: two separate draws may overlap.
	bootstrapPort := testkit.FreePortRun(t, bindHost, 4)
	portBase := bootstrapPort + 1
	env := map[string]string{
		"KPROXY_BIND_HOST":       bindHost,
		"KPROXY_ADVERTISED_HOST": advertised,
		"KPROXY_BOOTSTRAP_PORT":  "1", // the flag wins
	}
	args := []string{"--config", overrideFile(t, cluster.ListenAddrs()[0]),
		"--bootstrap-port", strconv.Itoa(bootstrapPort), "--broker-port-base", strconv.Itoa(portBase)}
	var stderr bytes.Buffer
	kp := testkit.ServeInProcess(t, func(ctx context.Context, log io.Writer) error {
		if code := runEnv(ctx, args, env, log, &stderr); code != 0 {
			return fmt.Errorf("kproxy exited %d: %s", code, stderr.String())
		}
		return nil
	})
	kp.WaitReady()
	if want := net.JoinHostPort(bindHost, strconv.Itoa(bootstrapPort)); kp.Bootstrap != want {
		t.Fatalf("bootstrap listener on %s, want %s", kp.Bootstrap, want)
	}
	// The bind host replaced the file's: nothing listens there.
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(bootstrapPort)), time.Second); err == nil {
		c.Close()
		t.Errorf("kproxy still listens on the file's bind host 127.0.0.1")
	}

	// kproxy.test is not in DNS: the client reaches the advertised host
	// at the bind address, on the port kproxy advertised.
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kp.Bootstrap), kgo.DefaultProduceTopic("containers"),
		kgo.Dialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, strings.Replace(addr, advertised+":", bindHost+":", 1))
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Brokers) != 3 {
		t.Fatalf("metadata lists %d brokers, want 3", len(resp.Brokers))
	}
	for _, b := range resp.Brokers {
		if b.Host != advertised || b.Port != int32(portBase)+b.NodeID {
			t.Errorf("node %d advertised as %s:%d, want %s:%d", b.NodeID, b.Host, b.Port, advertised, portBase+int(b.NodeID))
		}
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("through the advertised ports")}).FirstErr(); err != nil {
		t.Fatalf("produce through the advertised brokers: %v", err)
	}
	if _, err := kp.Stop(); err != nil {
		t.Errorf("kproxy did not drain cleanly: %v", err)
	}
}

// TestBadOverrideRefusedNamingIt: an override is validated as the file's
// key would be, by run and by validate, and the error names the variable
// or flag it came from.
func TestBadOverrideRefusedNamingIt(t *testing.T) {
	path := overrideFile(t, "127.0.0.1:9092")
	for _, tc := range []struct {
		args []string
		env  map[string]string
		says string
	}{
		{[]string{"run"}, map[string]string{"KPROXY_BOOTSTRAP_PORT": "70000"}, "listeners.bootstrap_port (set by KPROXY_BOOTSTRAP_PORT): 70000: must be a TCP port"},
		{[]string{"validate"}, map[string]string{"KPROXY_BROKER_PORT_BASE": "ninety"}, `KPROXY_BROKER_PORT_BASE: listeners.broker_port_base: "ninety" is not a number`},
		{[]string{"validate", "--bind-host", "0.0.0.0"}, nil, "listeners.advertised_host: required when listeners.bind_host (set by --bind-host) is 0.0.0.0"},
		{[]string{"validate", "--admin-listen", "9644"}, map[string]string{"KPROXY_ADMIN_LISTEN": "127.0.0.1:9644"}, `admin.listen (set by --admin-listen): "9644" is not host:port`},
	} {
		var stdout, stderr bytes.Buffer
		// Bounded: were the override ignored, run would serve the file.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		code := runEnv(ctx, append(tc.args, "--config", path), tc.env, &stdout, &stderr)
		cancel()
		if code != 1 || !strings.Contains(stderr.String(), tc.says) {
			t.Errorf("%v %v: exit %d, stderr %q; want 1 saying %q", tc.args, tc.env, code, stderr.String(), tc.says)
		}
	}
	// A variable a flag shadows is not validated: the flag is what counts.
	var stdout, stderr bytes.Buffer
	if code := runEnv(context.Background(), []string{"validate", "--config", path, "--bootstrap-port", "9092"},
		map[string]string{"KPROXY_BOOTSTRAP_PORT": "70000"}, &stdout, &stderr); code != 0 {
		t.Errorf("flag did not shadow the variable: exit %d, %s", code, stderr.String())
	}
}
