package engine_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// TestCloseWarningsAreSampled: connections closed for the same fault
// (here a frame size no Kafka client sends) are warned about once per
// log.sample; the rest go to debug, and the next warning counts them.
func TestCloseWarningsAreSampled(t *testing.T) {
	cluster := testkit.Cluster(t, 1)
	for _, tc := range []struct {
		sample    string
		wantWarns int
	}{{"1h", 1}, {"1ms", 5}} {
		t.Run("sample "+tc.sample, func(t *testing.T) {
			logs := &logbuf.Buffer{}
			yaml := fmt.Sprintf("upstream: {bootstrap_servers: [%q]}\nlog: {sample: %s}\n", cluster.ListenAddrs()[0], tc.sample)
			kp := testkit.StartEngine(t, testkit.Engine{YAML: yaml, Log: logs, Level: zerolog.WarnLevel})
			for i := 0; i < 5; i++ {
				c, err := net.Dial("tcp", kp.BootstrapAddr())
				if err != nil {
					t.Fatal(err)
				}
				c.Write([]byte{0xff, 0xff, 0xff, 0xff}) // a negative frame size
				if _, err := testkit.WaitClosed(c, 5*time.Second); err != nil {
					t.Fatal(err)
				}
				c.Close()
				time.Sleep(5 * time.Millisecond) // beyond the 1ms sample
			}
			warns := 0
			for _, l := range logs.Lines(t) {
				if l["message"] == "connection closed" && l["reason"] == "protocol_error" {
					warns++
				}
			}
			if warns != tc.wantWarns {
				t.Errorf("log.sample %s: %d protocol_error close warnings for 5 connections, want %d:\n%s", tc.sample, warns, tc.wantWarns, logs.String())
			}
		})
	}
}
