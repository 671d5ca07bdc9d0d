package e2elargemessages

import (
	"bytes"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
	"github.com/kproxy/kproxy/internal/testkit/seaweed"
)

// TestWithRecordEncryption: with encryption and offload on one topic, a
// produce is encrypted first and offloaded second, so the object holds the
// value encrypted under the record's data key (never the plaintext), the
// cluster holds a pointer carrying the encryption marker, and a consumer
// through kproxy reads the plaintext: resolved, then decrypted.
func TestWithRecordEncryption(t *testing.T) {
	e := newEncryptedEnv(t)
	ctx := e.ctx()
	plain := value(7, 2<<20)
	if err := e.proxied(kgo.DefaultProduceTopic("media.secret")).ProduceSync(ctx, &kgo.Record{Value: plain}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	raw := testkit.Consume(t, ctx, e.direct(kgo.ConsumeTopics("media.secret")), 1)[0]
	ptr := decodePointer(t, raw)
	marked := false
	for _, h := range raw.Headers {
		marked = marked || h.Key == envelope.HeaderName
	}
	if !marked {
		t.Errorf("the pointer record lacks the encryption marker: headers %v", raw.Headers)
	}
	obj, err := e.store.Admin.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(seaweed.Bucket), Key: aws.String(ptr.Key)})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := io.ReadAll(obj.Body)
	obj.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) <= len(plain) || bytes.Contains(stored, plain[:4096]) {
		t.Errorf("the object (%d bytes) is not the encrypted value of the %d plaintext bytes", len(stored), len(plain))
	}
	got := testkit.Consume(t, ctx, e.proxied(kgo.ConsumeTopics("media.secret")), 1)[0]
	if digest(got.Value) != digest(plain) {
		t.Errorf("consumer through kproxy read %d bytes, want the %d plaintext bytes", len(got.Value), len(plain))
	}
	for _, h := range got.Headers {
		if h.Key == envelope.HeaderName {
			t.Errorf("consumer through kproxy sees the encryption marker")
		}
	}
}

// newEncryptedEnv is an env whose topic media.secret is both offloaded
// (values over 1 MiB) and encrypted, under a key of a local-kms of its own.
func newEncryptedEnv(t *testing.T) *env {
	t.Helper()
	kms := localkms.Start(t)
	kms.CreateAlias("alias/kek", kms.CreateKey())
	return newEnv(t, []string{"media.secret"}, section(`    - {match: "media.*", threshold_bytes: 1048576}`, "")+`
encryption:
  kms:
    aws_kms: {endpoint: "`+kms.Endpoint()+`", region: `+localkms.Region+`}
  topics:
    - {match: "media.*", key: "alias/kek"}
`)
}
