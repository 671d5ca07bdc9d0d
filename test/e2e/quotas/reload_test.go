package e2equotas

import (
	"io"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// TestQuotasReloadInKproxy: kproxy as it runs from its file (proxy.Run):
// a policy section holding quotas alone enforces them without authorizing
// (nothing is denied), and a reload changes them for open and new
// connections.
func TestQuotasReloadInKproxy(t *testing.T) {
	t.Parallel()
	cluster := testkit.Cluster(t, 1)
	base := testkit.LocalConfig(cluster.ListenAddrs()[0])
	quotas := func(max string) string {
		return base + "policy:\n  quotas:\n    - {name: reloaded, principals: [\"client_id:reload-test\"], max_connections: " + max + "}\n"
	}
	kp := kproxytest.Start(t, quotas("1"), kproxytest.WithLog(io.Discard, zerolog.InfoLevel))

	first := testkit.DialRaw(t, kp.BootstrapAddr(), "reload-test")
	meta := kmsg.NewPtrMetadataRequest()
	meta.SetVersion(12)
	topic := kmsg.NewMetadataRequestTopic()
	topic.Topic = kmsg.StringPtr("any-topic")
	meta.Topics = append(meta.Topics, topic)
	resp := first.MustRoundTrip(t, meta).(*kmsg.MetadataResponse)
	if code := resp.Topics[0].ErrorCode; code == kerr.TopicAuthorizationFailed.Code {
		t.Fatal("a policy holding quotas alone denied a request: quotas must not bring a default deny")
	}
	if ok, _, c := answers(t, kp.BootstrapAddr(), "reload-test"); ok {
		t.Fatal("a second connection was served over max_connections 1")
	} else {
		c.Close()
	}

	kp.Reload(quotas("2"))
	kp.WaitLog("the quota reload", func(l testkit.LogLine) bool { return strings.HasPrefix(l.Message(), "quotas reloaded") })
	// The open connection rebinds on its next request and still counts.
	first.MustRoundTrip(t, meta)
	second, _, _ := answers(t, kp.BootstrapAddr(), "reload-test")
	if !second {
		t.Fatal("after the reload to max_connections 2, a second connection was refused")
	}
	if ok, _, c := answers(t, kp.BootstrapAddr(), "reload-test"); ok {
		t.Fatal("a third connection was served over max_connections 2")
	} else {
		c.Close()
	}
}
