package e2esecurity

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/saramakit"
)

// runKcat runs kcat with args and stdin, bounded by timeout, and returns
// its standard output, standard error and error.
func runKcat(timeout time.Duration, stdin []byte, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kcat", args...)
	cmd.WaitDelay = 5 * time.Second
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", err, ctx.Err())
	}
	return stdout.String(), stderr.String(), err
}

func kcatSASL(p certs.Files, bootstrap, mechanism, user, password string) []string {
	return []string{"-b", bootstrap,
		"-X", "security.protocol=SASL_SSL", "-X", "ssl.ca.location=" + p.CAFile,
		"-X", "sasl.mechanisms=" + mechanism, "-X", "sasl.username=" + user, "-X", "sasl.password=" + password}
}

// TestKcatSASLSSL: librdkafka, through kcat, over TLS with SCRAM-SHA-512
// and with PLAIN to kproxy (which logs in upstream with its own
// SCRAM-SHA-256 over TLS) produces and consumes 100 records each; a wrong
// password gets nothing.
func TestKcatSASLSSL(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Skip("kcat is not on PATH (apt-get install kcat)")
	}
	p := certs.New(t)
	cluster := secureUpstream(t, p, kfake.SeedTopics(3, "kcat-scram", "kcat-plain"))
	px := kproxytest.Start(t, proxyYAML(t, p, cluster.ListenAddrs(), "none", "terminate"))

	for _, tc := range []struct{ mechanism, topic string }{{"SCRAM-SHA-512", "kcat-scram"}, {"PLAIN", "kcat-plain"}} {
		t.Run(tc.mechanism, func(t *testing.T) {
			auth := kcatSASL(p, px.BootstrapAddr(), tc.mechanism, "alice", "alice-secret")
			var in bytes.Buffer
			var want []string
			for i := range 100 {
				line := fmt.Sprintf("k%03d:%s-v%03d", i, tc.mechanism, i)
				want = append(want, line)
				in.WriteString(line + "\n")
			}
			if _, stderr, err := runKcat(60*time.Second, in.Bytes(), append(auth, "-P", "-t", tc.topic, "-K:", "-X", "acks=all")...); err != nil {
				t.Fatalf("kcat produce: %v\n%s", err, stderr)
			}
			out, stderr, err := runKcat(60*time.Second, nil, append(auth, "-C", "-t", tc.topic, "-o", "beginning", "-e", "-f", `%k:%s\n`)...)
			if err != nil {
				t.Fatalf("kcat consume: %v\n%s", err, stderr)
			}
			got := strings.Split(strings.TrimSpace(out), "\n")
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("kcat consumed %d records, want the 100 produced; first lines %q", len(got), got[:min(5, len(got))])
			}
		})
	}

	t.Run("wrong password", func(t *testing.T) {
		out, stderr, err := runKcat(30*time.Second, nil, append(kcatSASL(p, px.BootstrapAddr(), "SCRAM-SHA-512", "alice", "not-alices"), "-L", "-m", "3")...)
		if err == nil {
			t.Fatalf("kcat -L with a wrong password succeeded:\n%s", out)
		}
		if !strings.Contains(stderr, "Authentication failed") {
			t.Errorf("kcat does not report an authentication failure:\n%s", stderr)
		}
	})
}

func saramaSCRAMConfig(p certs.Files, user, password string, handshake int16) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "kproxy-e2esecurity-sarama"
	cfg.Version = sarama.V3_6_0_0
	cfg.Metadata.Retry.Max = 1
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Retry.Max = 3
	cfg.Producer.Retry.Backoff = 50 * time.Millisecond
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	cfg.Net.TLS.Enable = true
	cfg.Net.TLS.Config = &tls.Config{RootCAs: caPool(p), MinVersion: tls.VersionTLS12}
	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.Handshake = true
	cfg.Net.SASL.Version = handshake
	// sarama sends no ApiVersions before a v0 handshake, which then is the
	// first thing on the connection, as with pre-1.0 clients.
	cfg.ApiVersionsRequest = handshake != sarama.SASLHandshakeV0
	cfg.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
	cfg.Net.SASL.User, cfg.Net.SASL.Password = user, password
	cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &saramakit.SCRAMClient{SHA512: true} }
	return cfg
}

// TestSaramaTLSSCRAM: sarama over TLS with SCRAM-SHA-512, both with
// SaslHandshake v1 (SaslAuthenticate requests) and v0 (raw tokens), produces
// 100 records and consumes them back; a wrong password is refused.
func TestSaramaTLSSCRAM(t *testing.T) {
	p := certs.New(t)
	cluster := secureUpstream(t, p, kfake.SeedTopics(1, "sarama-v1", "sarama-v0"))
	px := kproxytest.Start(t, proxyYAML(t, p, cluster.ListenAddrs(), "none", "terminate"))

	for _, tc := range []struct {
		name      string
		handshake int16
		topic     string
	}{{"handshake v1", sarama.SASLHandshakeV1, "sarama-v1"}, {"handshake v0", sarama.SASLHandshakeV0, "sarama-v0"}} {
		t.Run(tc.name, func(t *testing.T) {
			client, producer := saramakit.Producer(t, []string{px.BootstrapAddr()}, saramaSCRAMConfig(p, "alice", "alice-secret", tc.handshake))
			msgs := make([]*sarama.ProducerMessage, 100)
			for i := range msgs {
				msgs[i] = &sarama.ProducerMessage{Topic: tc.topic, Value: sarama.StringEncoder(fmt.Sprintf("sarama-%d", i))}
			}
			if err := producer.SendMessages(msgs); err != nil {
				t.Fatalf("sarama produce: %v", err)
			}
			consumer, err := sarama.NewConsumerFromClient(client)
			if err != nil {
				t.Fatal(err)
			}
			defer consumer.Close()
			pc, err := consumer.ConsumePartition(tc.topic, 0, sarama.OffsetOldest)
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			timeout := time.After(30 * time.Second)
			for i := range 100 {
				select {
				case m := <-pc.Messages():
					if want := fmt.Sprintf("sarama-%d", i); string(m.Value) != want || m.Offset != int64(i) {
						t.Fatalf("message %d: offset %d value %q, want %q", i, m.Offset, m.Value, want)
					}
				case err := <-pc.Errors():
					t.Fatalf("sarama consume: %v", err)
				case <-timeout:
					t.Fatalf("sarama consumed %d of 100 records in 30s", i)
				}
			}
		})
	}

	t.Run("wrong password", func(t *testing.T) {
		cfg := saramaSCRAMConfig(p, "alice", "wrong", sarama.SASLHandshakeV1)
		client, err := sarama.NewClient([]string{px.BootstrapAddr()}, cfg)
		if err == nil {
			client.Close()
			t.Fatal("sarama connected with a wrong password")
		}
		if !strings.Contains(err.Error(), "SASL") && !strings.Contains(err.Error(), "uthentication") {
			t.Errorf("sarama error %v does not say authentication failed", err)
		}
	})
}
