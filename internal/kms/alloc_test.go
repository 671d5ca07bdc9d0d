package kms_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/kms"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// TestSteadyStateAllocatesNothing: once a DEK is active and unwrapped,
// reserving it for a record, sealing, unwrapping and opening the record
// allocate nothing.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	k, _ := startWithKEK(t, "alias/kek")
	ctx := testkit.Context(t, 20*time.Second)
	d, _ := localDataKeys(t, k, kms.DataKeysConfig{MaxAge: time.Hour, MaxRecords: 5_000_000})
	value := make([]byte, 100)
	nonce := make([]byte, 12)
	buf := make([]byte, 0, 256)
	plain := make([]byte, 0, 256)
	record := func() {
		l, err := d.Reserve(ctx, "alias/kek", 1)
		if err != nil {
			t.Fatal(err)
		}
		binary.BigEndian.PutUint64(nonce[4:], uint64(l.First))
		ct := l.DEK.AEAD.Seal(buf[:0], nonce, value, nil)
		dek, err := d.Unwrap(ctx, l.DEK.Wrapped)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dek.AEAD.Open(plain[:0], nonce, ct, nil); err != nil {
			t.Fatal(err)
		}
	}
	record() // fetches the DEK
	if allocs := testing.AllocsPerRun(1000, record); allocs != 0 {
		t.Fatalf("%v allocations per record, want 0", allocs)
	}
}

func BenchmarkReserveParallel(b *testing.B) {
	k := localkms.Start(b)
	keyWithAlias(k, "alias/kek")
	p, err := kms.NewAWS(b.Context(), kms.AWSConfig{Endpoint: k.Endpoint(), Region: localkms.Region, Credentials: localkms.Credentials()})
	if err != nil {
		b.Fatal(err)
	}
	d, err := kms.NewDataKeys(p, kms.DataKeysConfig{MaxAge: time.Hour, MaxRecords: kms.MaxRecordsLimit})
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := d.Reserve(ctx, "alias/kek", 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}
