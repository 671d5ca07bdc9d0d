package kms_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/kms"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// countingKMS counts the calls that reach the real KMS behind it.
type countingKMS struct {
	kms.Provider
	generate, decrypt atomic.Int64
}

func (c *countingKMS) GenerateDataKey(ctx context.Context, keyID string) (kms.DataKey, error) {
	c.generate.Add(1)
	return c.Provider.GenerateDataKey(ctx, keyID)
}

func (c *countingKMS) Decrypt(ctx context.Context, wrapped []byte) ([]byte, error) {
	c.decrypt.Add(1)
	return c.Provider.Decrypt(ctx, wrapped)
}

// localDataKeys is a DataKeys in front of local-kms, counting KMS calls.
func localDataKeys(t *testing.T, k *localkms.Server, cfg kms.DataKeysConfig) (*kms.DataKeys, *countingKMS) {
	t.Helper()
	counted := &countingKMS{Provider: newAWS(t, k, 0)}
	d, err := kms.NewDataKeys(counted, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d, counted
}

// sealed is one encrypted record as a test keeps it: the envelope's
// parts, not its wire format.
type sealed struct {
	wrapped    []byte
	nonce      []byte
	ciphertext []byte
}

// seal encrypts value with a record's share of a DEK; the nonce is the
// record's index within the DEK.
func seal(l kms.Lease, value []byte) sealed {
	nonce := make([]byte, l.DEK.AEAD.NonceSize())
	binary.BigEndian.PutUint64(nonce[4:], uint64(l.First))
	return sealed{wrapped: l.DEK.Wrapped, nonce: nonce, ciphertext: l.DEK.AEAD.Seal(nil, nonce, value, nil)}
}

func open(ctx context.Context, d *kms.DataKeys, s sealed) ([]byte, error) {
	dek, err := d.Unwrap(ctx, s.wrapped)
	if err != nil {
		return nil, err
	}
	return dek.AEAD.Open(nil, s.nonce, s.ciphertext, nil)
}

// TestKMSCallsDoNotGrowWithRecords: 1e5 records encrypted by 8 goroutines
// and decrypted by 8 goroutines of another proxy (a cold cache) cost one
// GenerateDataKey and one Decrypt on the real KMS with the default bounds;
// with max_records 1000 exactly 100 DEKs, none used for more than 1000
// records nor with a nonce twice.
func TestKMSCallsDoNotGrowWithRecords(t *testing.T) {
	t.Parallel()
	k, _ := startWithKEK(t, "alias/kek-payments-cards")
	ctx := testkit.Context(t, 120*time.Second)
	const records, workers = 100_000, 8

	for _, c := range []struct {
		maxRecords            int64
		wantGenerate, wantDEK int64
	}{
		{5_000_000, 1, 1},
		{1000, records / 1000, records / 1000},
	} {
		producer, producerKMS := localDataKeys(t, k, kms.DataKeysConfig{MaxAge: time.Hour, MaxRecords: c.maxRecords})
		consumer, consumerKMS := localDataKeys(t, k, kms.DataKeysConfig{MaxAge: time.Hour, MaxRecords: c.maxRecords})
		out := make([]sealed, records)
		start := time.Now()
		parallel(t, workers, records, func(i int) error {
			l, err := producer.Reserve(ctx, "alias/kek-payments-cards", 1)
			if err != nil {
				return err
			}
			out[i] = seal(l, binary.BigEndian.AppendUint64(nil, uint64(i)))
			return nil
		})
		encrypt := time.Since(start)
		if _, err := open(ctx, producer, out[0]); err != nil {
			t.Fatal(err)
		}
		parallel(t, workers, records, func(i int) error {
			got, err := open(ctx, consumer, out[i])
			if err != nil {
				return err
			}
			if binary.BigEndian.Uint64(got) != uint64(i) {
				t.Errorf("record %d decrypted to %d", i, binary.BigEndian.Uint64(got))
			}
			return nil
		})
		t.Logf("max_records %d: %d records from %d goroutines in %v; KMS calls: %d GenerateDataKey, %d Decrypt (producer), %d Decrypt (consumer)",
			c.maxRecords, records, workers, encrypt, producerKMS.generate.Load(), producerKMS.decrypt.Load(), consumerKMS.decrypt.Load())
		if g := producerKMS.generate.Load(); g != c.wantGenerate {
			t.Errorf("max_records %d: %d GenerateDataKey calls, want %d", c.maxRecords, g, c.wantGenerate)
		}
		if d := producerKMS.decrypt.Load(); d != 0 {
			t.Errorf("max_records %d: the producer called Decrypt %d times for its own DEKs", c.maxRecords, d)
		}
		if d := consumerKMS.decrypt.Load(); d != c.wantDEK {
			t.Errorf("max_records %d: the consumer called Decrypt %d times for %d DEKs", c.maxRecords, d, c.wantDEK)
		}
		perDEK := map[string]map[string]bool{}
		for _, s := range out {
			nonces := perDEK[string(s.wrapped)]
			if nonces == nil {
				nonces = map[string]bool{}
				perDEK[string(s.wrapped)] = nonces
			}
			if nonces[string(s.nonce)] {
				t.Fatalf("max_records %d: a nonce used twice under one DEK", c.maxRecords)
			}
			nonces[string(s.nonce)] = true
		}
		for _, nonces := range perDEK {
			if int64(len(nonces)) > c.maxRecords {
				t.Errorf("a DEK encrypted %d records, past max_records %d", len(nonces), c.maxRecords)
			}
		}
		if int64(len(perDEK)) != c.wantDEK {
			t.Errorf("max_records %d: %d DEKs used, want %d", c.maxRecords, len(perDEK), c.wantDEK)
		}
	}
}

// parallel runs do(0..n-1) on workers goroutines, failing the test at the
// first error.
func parallel(t *testing.T, workers, n int, do func(i int) error) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := do(i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestDEKReplacedAtMaxAge(t *testing.T) {
	t.Parallel()
	k, _ := startWithKEK(t, "alias/kek")
	ctx := testkit.Context(t, 20*time.Second)
	const maxAge = time.Second
	d, counted := localDataKeys(t, k, kms.DataKeysConfig{MaxAge: maxAge, MaxRecords: kms.MaxRecordsLimit})

	first, err := d.Reserve(ctx, "alias/kek", 1)
	if err != nil {
		t.Fatal(err)
	}
	got := time.Now()
	for time.Since(got) < maxAge/2 {
		l, err := d.Reserve(ctx, "alias/kek", 1)
		if err != nil {
			t.Fatal(err)
		}
		if l.DEK != first.DEK {
			t.Fatalf("a new DEK after %v, before max_age %v", time.Since(got), maxAge)
		}
	}
	time.Sleep(maxAge)
	later, err := d.Reserve(ctx, "alias/kek", 1)
	if err != nil {
		t.Fatal(err)
	}
	if later.DEK == first.DEK || bytes.Equal(later.DEK.Wrapped, first.DEK.Wrapped) {
		t.Fatalf("the DEK is still used %v after it was fetched; max_age %v", time.Since(got), maxAge)
	}
	if n := counted.generate.Load(); n != 2 {
		t.Errorf("%d GenerateDataKey calls, want 2", n)
	}
}

// TestRotatedAliasUsedForTheNextDEK: after UpdateAlias points the KEK's
// alias at a new key, the next DEK is wrapped under the new key, and
// records under the old one still decrypt in a proxy that never saw them
// (a cold cache). A changed key selector is a new name: its first Reserve
// fetches under it.
func TestRotatedAliasUsedForTheNextDEK(t *testing.T) {
	t.Parallel()
	k, oldKey := startWithKEK(t, "alias/kek")
	ctx := testkit.Context(t, 20*time.Second)
	d, _ := localDataKeys(t, k, kms.DataKeysConfig{MaxAge: time.Hour, MaxRecords: 2})

	l, err := d.Reserve(ctx, "alias/kek", 2)
	if err != nil {
		t.Fatal(err)
	}
	if l.DEK.KeyID != oldKey {
		t.Fatalf("DEK under %s, want %s", l.DEK.KeyID, oldKey)
	}
	before := seal(l, []byte("before rotation"))

	newKey := k.CreateKey()
	k.UpdateAlias("alias/kek", newKey)
	l, err = d.Reserve(ctx, "alias/kek", 1)
	if err != nil {
		t.Fatal(err)
	}
	if l.DEK.KeyID != newKey {
		t.Fatalf("the DEK after the rotation is under %s, want the new key %s", l.DEK.KeyID, newKey)
	}

	reader, readerKMS := localDataKeys(t, k, kms.DataKeysConfig{MaxAge: time.Hour, MaxRecords: 2})
	got, err := open(ctx, reader, before)
	if err != nil || string(got) != "before rotation" {
		t.Fatalf("a record from before the rotation: %q, %v", got, err)
	}
	if readerKMS.decrypt.Load() != 1 {
		t.Errorf("%d Decrypt calls, want 1", readerKMS.decrypt.Load())
	}

	otherKey := keyWithAlias(k, "alias/kek-v2")
	l, err = d.Reserve(ctx, "alias/kek-v2", 1)
	if err != nil || l.DEK.KeyID != otherKey {
		t.Fatalf("changed selector: DEK under %v (%v), want %s", l.DEK, err, otherKey)
	}
}

// TestCryptoShredding: once its KEK is disabled a record cannot be read by
// a proxy that has not unwrapped its DEK, nor by one that has, once the
// unwrapped DEK's time in the cache is over.
func TestCryptoShredding(t *testing.T) {
	t.Parallel()
	k, key := startWithKEK(t, "alias/kek")
	ctx := testkit.Context(t, 20*time.Second)
	const ttl = 300 * time.Millisecond
	cfg := kms.DataKeysConfig{MaxAge: time.Hour, MaxRecords: 100, UnwrappedTTL: ttl}
	producer, _ := localDataKeys(t, k, cfg)
	l, err := producer.Reserve(ctx, "alias/kek", 1)
	if err != nil {
		t.Fatal(err)
	}
	record := seal(l, []byte("card number"))
	warm, _ := localDataKeys(t, k, cfg)
	if _, err := open(ctx, warm, record); err != nil {
		t.Fatal(err)
	}

	k.DisableKey(key)
	cold, _ := localDataKeys(t, k, cfg)
	if _, err := open(ctx, cold, record); !errors.Is(err, kms.ErrKeyUnavailable) {
		t.Fatalf("a record under a disabled key: %v; want ErrKeyUnavailable", err)
	}
	time.Sleep(ttl)
	if _, err := open(ctx, warm, record); !errors.Is(err, kms.ErrKeyUnavailable) {
		t.Fatalf("a record under a disabled key, %v after its DEK was unwrapped: %v; want ErrKeyUnavailable", ttl, err)
	}
	if _, err := producer.Reserve(ctx, "alias/kek", 100); !errors.Is(err, kms.ErrKeyUnavailable) {
		t.Fatalf("a new DEK under a disabled key: %v; want ErrKeyUnavailable", err)
	}
}

// TestUnwrapCacheIsBounded: past its size the least recently used DEK is
// dropped and unwrapped again when needed; a refused blob is not sent to
// the KMS again at once, an oversized one never.
func TestUnwrapCacheIsBounded(t *testing.T) {
	t.Parallel()
	k, _ := startWithKEK(t, "alias/kek")
	ctx := testkit.Context(t, 20*time.Second)
	p := newAWS(t, k, 0)
	var wrapped [][]byte
	for range 3 {
		dk, err := p.GenerateDataKey(ctx, "alias/kek")
		if err != nil {
			t.Fatal(err)
		}
		wrapped = append(wrapped, dk.Wrapped)
	}
	d, counted := localDataKeys(t, k, kms.DataKeysConfig{MaxAge: time.Hour, MaxRecords: 100, UnwrappedSize: 2})
	for _, i := range []int{0, 1, 0, 2, 0, 1} { // 0 stays, 1 is evicted by 2
		if _, err := d.Unwrap(ctx, wrapped[i]); err != nil {
			t.Fatal(err)
		}
	}
	if n := counted.decrypt.Load(); n != 4 {
		t.Errorf("%d Decrypt calls, want 4 (0, 1, 2, 1 again)", n)
	}

	corrupt := bytes.Clone(wrapped[0])
	corrupt[len(corrupt)-1] ^= 1
	for range 3 {
		if _, err := d.Unwrap(ctx, corrupt); !errors.Is(err, kms.ErrRejected) {
			t.Fatalf("corrupt blob: %v; want ErrRejected", err)
		}
	}
	if _, err := d.Unwrap(ctx, make([]byte, kms.MaxWrappedSize+1)); !errors.Is(err, kms.ErrRejected) {
		t.Fatalf("oversized blob: %v; want ErrRejected", err)
	}
	if n := counted.decrypt.Load(); n != 5 {
		t.Errorf("%d Decrypt calls, want 5 (the corrupt blob once, the oversized one never)", n)
	}
}

// TestStoppedKMSIsRetriableThenRecovers: without a DEK and with the KMS
// down, Reserve fails with the retriable class; once the KMS is back the
// next Reserve succeeds.
func TestStoppedKMSIsRetriableThenRecovers(t *testing.T) {
	t.Parallel()
	k, _ := startWithKEK(t, "alias/kek")
	ctx := testkit.Context(t, 60*time.Second)
	counted := &countingKMS{Provider: newAWS(t, k, time.Second)}
	d, err := kms.NewDataKeys(counted, kms.DataKeysConfig{MaxAge: time.Hour, MaxRecords: 100})
	if err != nil {
		t.Fatal(err)
	}
	k.Stop()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = d.Reserve(ctx, "alias/kek", 1) })
	}
	wg.Wait()
	for _, err := range errs {
		if !errors.Is(err, kms.ErrRetriable) {
			t.Fatalf("Reserve with the KMS stopped: %v; want ErrRetriable", err)
		}
	}
	if n := counted.generate.Load(); n >= 8 {
		t.Errorf("8 waiting producers made %d GenerateDataKey calls; they should share them", n)
	}
	k.Restart()
	if _, err := d.Reserve(ctx, "alias/kek", 1); err != nil {
		t.Fatalf("Reserve after the KMS restarted: %v", err)
	}
}

func TestDataKeysConfigValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  kms.DataKeysConfig
		want string
	}{
		{kms.DataKeysConfig{MaxAge: time.Hour, MaxRecords: 5_000_000}, ""},
		{kms.DataKeysConfig{MaxRecords: 5}, "dek.max_age"},
		{kms.DataKeysConfig{MaxAge: time.Millisecond, MaxRecords: 5}, "dek.max_age: 1ms: must be at least 1s"},
		{kms.DataKeysConfig{MaxAge: time.Hour}, "dek.max_records"},
		{kms.DataKeysConfig{MaxAge: time.Hour, MaxRecords: kms.MaxRecordsLimit + 1}, "dek.max_records"},
	} {
		err := c.cfg.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v; want %q", c.cfg, err, c.want)
		}
	}
}
