package e2esni

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// TestSNIKcat: kcat (librdkafka, which sends SNI and verifies the name)
// lists the cluster, produces and consumes over the SNI listener, the
// names resolved through /etc/hosts entries the test adds.
func TestSNIKcat(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (apt-get install -y kcat; .ci/run installs it): skipping")
	}
	if why := testkit.AddHosts(t, bootstrapHost, "broker-0."+domain, "broker-1."+domain, "broker-2."+domain); why != "" {
		t.Skipf("kcat needs the SNI names in /etc/hosts: %s; skipping", why)
	}
	const topic = "sni-kcat"
	cluster := testkit.Cluster(t, 3, kfake.SeedTopics(3, topic))
	p := newPKI(t)
	px := kproxytest.Start(t, sniYAML(cluster, p, yamlOpts{listeners: "  port_per_broker: false"}))
	port := sniPort(t, px)
	seed := net.JoinHostPort(bootstrapHost, strconv.Itoa(port))
	kcatTLS := []string{"-b", seed, "-X", "security.protocol=ssl", "-X", "ssl.ca.location=" + p.CAFile}
	run := func(stdin string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, kcat, append(append([]string(nil), kcatTLS...), args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kcat %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	list := run("", "-L")
	for id := range 3 {
		want := "broker " + strconv.Itoa(id) + " at broker-" + strconv.Itoa(id) + "." + domain + ":" + strconv.Itoa(port)
		if !strings.Contains(list, want) {
			t.Errorf("kcat -L does not list %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "127.0.0.1") {
		t.Errorf("kcat -L lists an address, not a name of the pattern:\n%s", list)
	}
	var in strings.Builder
	for i := range 20 {
		in.WriteString("kcat-" + strconv.Itoa(i) + "\n")
	}
	run(in.String(), "-P", "-t", topic, "-X", "acks=all")
	out := run("", "-C", "-t", topic, "-o", "beginning", "-c", "20", "-e", "-q", "-f", "%s\n")
	if got := strings.Count(out, "kcat-"); got != 20 {
		t.Fatalf("kcat consumed %d records, want 20:\n%s", got, out)
	}
}
