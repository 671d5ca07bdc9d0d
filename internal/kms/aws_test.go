package kms_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/kms"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
	"github.com/kproxy/kproxy/internal/testkit/tcppeer"
)

// newAWS is the AWS provider pointed at local-kms, as the configuration
// `kms.aws_kms: {endpoint, region}` builds it.
func newAWS(t *testing.T, k *localkms.Server, timeout time.Duration) *kms.AWS {
	t.Helper()
	p, err := kms.NewAWS(context.Background(), kms.AWSConfig{Endpoint: k.Endpoint(), Region: localkms.Region,
		CallTimeout: timeout, Credentials: localkms.Credentials()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startWithKEK starts local-kms with one key under alias, returning the
// key's ARN.
func startWithKEK(t *testing.T, alias string) (*localkms.Server, string) {
	t.Helper()
	k := localkms.Start(t)
	return k, keyWithAlias(k, alias)
}

// keyWithAlias creates a key and an alias for it, returning the key's ARN.
func keyWithAlias(k *localkms.Server, alias string) string {
	arn := k.CreateKey()
	k.CreateAlias(alias, arn)
	return arn
}

func TestAWSGenerateDecryptRoundTrip(t *testing.T) {
	t.Parallel()
	k, arn := startWithKEK(t, "alias/kek-payments-cards")
	p := newAWS(t, k, 0)
	ctx := testkit.Context(t, 20*time.Second)

	dk, err := p.GenerateDataKey(ctx, "alias/kek-payments-cards")
	if err != nil {
		t.Fatal(err)
	}
	if len(dk.Plaintext) != kms.DEKSize || len(dk.Wrapped) == 0 || dk.KeyID != arn {
		t.Fatalf("data key: %d-byte key, %d-byte blob, key %q; want %d bytes, a blob, %q", len(dk.Plaintext), len(dk.Wrapped), dk.KeyID, kms.DEKSize, arn)
	}
	if bytes.Contains(dk.Wrapped, dk.Plaintext) {
		t.Fatal("the wrapped blob holds the plaintext key")
	}
	got, err := p.Decrypt(ctx, dk.Wrapped)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, dk.Plaintext) {
		t.Fatal("Decrypt returned another key than GenerateDataKey")
	}
	again, err := p.GenerateDataKey(ctx, arn)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(again.Plaintext, dk.Plaintext) {
		t.Fatal("two GenerateDataKey calls returned the same key")
	}
}

func TestAWSMissingDisabledAndPendingDeletionKeysAreUnavailable(t *testing.T) {
	t.Parallel()
	k := localkms.Start(t)
	p := newAWS(t, k, 0)
	ctx := testkit.Context(t, 30*time.Second)

	disabled := keyWithAlias(k, "alias/disabled")
	doomed := keyWithAlias(k, "alias/doomed")
	var wrapped [][]byte
	for _, key := range []string{disabled, doomed} {
		dk, err := p.GenerateDataKey(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		wrapped = append(wrapped, dk.Wrapped)
	}
	k.DisableKey(disabled)
	k.ScheduleKeyDeletion(doomed)

	for _, c := range []struct {
		name string
		call func() error
	}{
		{"generate under an alias that does not exist", func() error { _, err := p.GenerateDataKey(ctx, "alias/nothing-here"); return err }},
		{"generate under a disabled key", func() error { _, err := p.GenerateDataKey(ctx, "alias/disabled"); return err }},
		{"decrypt under a disabled key", func() error { _, err := p.Decrypt(ctx, wrapped[0]); return err }},
		{"generate under a key pending deletion", func() error { _, err := p.GenerateDataKey(ctx, doomed); return err }},
		{"decrypt under a key pending deletion", func() error { _, err := p.Decrypt(ctx, wrapped[1]); return err }},
	} {
		err := c.call()
		if !errors.Is(err, kms.ErrKeyUnavailable) || errors.Is(err, kms.ErrRetriable) || errors.Is(err, kms.ErrRejected) {
			t.Errorf("%s: %v; want ErrKeyUnavailable alone", c.name, err)
		}
	}
}

func TestAWSCorruptBlobIsRejected(t *testing.T) {
	t.Parallel()
	k, _ := startWithKEK(t, "alias/any")
	p := newAWS(t, k, 0)
	ctx := testkit.Context(t, 20*time.Second)
	dk, err := p.GenerateDataKey(ctx, "alias/any")
	if err != nil {
		t.Fatal(err)
	}
	dk.Wrapped[len(dk.Wrapped)-1] ^= 1
	_, err = p.Decrypt(ctx, dk.Wrapped)
	if !errors.Is(err, kms.ErrRejected) {
		t.Fatalf("decrypt a blob with one bit flipped: %v; want ErrRejected", err)
	}
}

// TestAWSStoppedKMSIsRetriableAndRecovers: with the KMS down calls fail
// fast with the retriable class; once it is back the same provider works
// and keys made before still decrypt.
func TestAWSStoppedKMSIsRetriableAndRecovers(t *testing.T) {
	t.Parallel()
	k, _ := startWithKEK(t, "alias/kek")
	const timeout = 2 * time.Second
	p := newAWS(t, k, timeout)
	ctx := testkit.Context(t, 60*time.Second)
	before, err := p.GenerateDataKey(ctx, "alias/kek")
	if err != nil {
		t.Fatal(err)
	}

	k.Stop()
	start := time.Now()
	_, err = p.GenerateDataKey(ctx, "alias/kek")
	took := time.Since(start)
	if !errors.Is(err, kms.ErrRetriable) {
		t.Fatalf("generate with the KMS stopped: %v; want ErrRetriable", err)
	}
	if took > timeout+time.Second {
		t.Errorf("generate with the KMS stopped took %v; the call timeout is %v", took, timeout)
	}
	if _, err := p.Decrypt(ctx, before.Wrapped); !errors.Is(err, kms.ErrRetriable) {
		t.Fatalf("decrypt with the KMS stopped: %v; want ErrRetriable", err)
	}
	t.Logf("KMS stopped: failed in %v with %v", took, err)

	k.Restart()
	if _, err := p.GenerateDataKey(ctx, "alias/kek"); err != nil {
		t.Fatalf("generate after the KMS restarted: %v", err)
	}
	got, err := p.Decrypt(ctx, before.Wrapped)
	if err != nil || !bytes.Equal(got, before.Plaintext) {
		t.Fatalf("decrypt a key from before the restart: %v", err)
	}
}

// TestAWSCredentialsFromTheEnvironment: without explicit credentials the
// SDK's default chain is used; here its first link, the environment.
func TestAWSCredentialsFromTheEnvironment(t *testing.T) {
	k, _ := startWithKEK(t, "alias/kek")
	t.Setenv("AWS_ACCESS_KEY_ID", "from-the-environment")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	p, err := kms.NewAWS(context.Background(), kms.AWSConfig{Endpoint: k.Endpoint(), Region: localkms.Region})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.GenerateDataKey(testkit.Context(t, 20*time.Second), "alias/kek"); err != nil {
		t.Fatal(err)
	}
}

func TestAWSConfigValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  kms.AWSConfig
		want string // "" for valid
	}{
		{kms.AWSConfig{Endpoint: "https://kms.eu-west-1.amazonaws.com", Region: "eu-west-1"}, ""},
		{kms.AWSConfig{Region: "eu-west-1"}, ""},
		{kms.AWSConfig{Endpoint: "http://127.0.0.1:4566", Region: "eu-west-1"}, ""},
		{kms.AWSConfig{Endpoint: "https://kms.eu-west-1.amazonaws.com"}, "kms.aws_kms.region: required"},
		{kms.AWSConfig{Endpoint: "http://kms.internal:4566", Region: "eu-west-1"}, "kms.aws_kms.endpoint \"http://kms.internal:4566\": http only towards a loopback address"},
		{kms.AWSConfig{Endpoint: "ftp://kms", Region: "eu-west-1"}, "kms.aws_kms.endpoint \"ftp://kms\": the scheme must be https"},
		{kms.AWSConfig{Endpoint: "kms.eu-west-1.amazonaws.com", Region: "eu-west-1"}, "not an absolute URL"},
	} {
		err := c.cfg.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v; want %q", c.cfg, err, c.want)
		}
	}
}

func contains(s, sub string) bool { return bytes.Contains([]byte(s), []byte(sub)) }

// TestAWSSilentKMSTimesOut: a KMS that accepts connections and never
// answers costs a call its timeout, then the retriable class.
func TestAWSSilentKMSTimesOut(t *testing.T) {
	t.Parallel()
	// Reads the request, answers nothing, until the client hangs up.
	addr := tcppeer.Serve(t, func(conn net.Conn) { io.Copy(io.Discard, conn) })
	const timeout = 1500 * time.Millisecond
	p, err := kms.NewAWS(context.Background(), kms.AWSConfig{Endpoint: "http://" + addr, Region: localkms.Region,
		CallTimeout: timeout, Credentials: localkms.Credentials()})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = p.GenerateDataKey(testkit.Context(t, 30*time.Second), "alias/kek")
	took := time.Since(start)
	if !errors.Is(err, kms.ErrRetriable) {
		t.Fatalf("generate against a silent KMS: %v; want ErrRetriable", err)
	}
	if took < timeout-100*time.Millisecond || took > timeout+time.Second {
		t.Errorf("generate against a silent KMS returned after %v; the call timeout is %v", took, timeout)
	}
}
