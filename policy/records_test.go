package policy

import (
	"encoding/binary"
	"errors"
	"testing"
)

func TestForEachBatch(t *testing.T) {
	records := append(append(batch(0x1|0x10, 42, 5), batch(0x4, -1, 100)...), batch(0x3, 7, 0)...)
	var got []batchInfo
	if err := forEachBatch(records, func(b batchInfo) error { got = append(got, b); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []batchInfo{
		{codec: 1, transactional: true, producerID: 42},
		{codec: 4, producerID: -1},
		{codec: 3, producerID: 7},
	}
	if len(got) != len(want) {
		t.Fatalf("%d batches, want %d", len(got), len(want))
	}
	total := 0
	for i := range want {
		want[i].size = got[i].size
		if got[i] != want[i] {
			t.Errorf("batch %d = %+v, want %+v", i, got[i], want[i])
		}
		total += got[i].size
	}
	if total != len(records) {
		t.Errorf("sizes add up to %d of %d bytes", total, len(records))
	}
	if !hasTransactionalBatch(records) || hasTransactionalBatch(batch(0, 1, 0)) {
		t.Error("hasTransactionalBatch wrong")
	}
}

func TestForEachBatchLegacyAndMalformed(t *testing.T) {
	// A magic-1 message: offset, size, crc, magic, attributes (snappy).
	legacy := make([]byte, 12+14)
	binary.BigEndian.PutUint32(legacy[8:], 14)
	legacy[16], legacy[17] = 1, 2
	var codec uint8
	if err := forEachBatch(legacy, func(b batchInfo) error { codec = b.codec; return nil }); err != nil || codec != 2 {
		t.Errorf("legacy: codec %d, err %v", codec, err)
	}
	for name, b := range map[string][]byte{
		"truncated header": batch(0, 1, 0)[:20],
		"length overruns":  batch(0, 1, 10)[:40],
		"bad magic":        func() []byte { b := batch(0, 1, 0); b[16] = 9; return b }(),
	} {
		if err := forEachBatch(b, func(batchInfo) error { return nil }); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	stop := errors.New("x")
	if err := forEachBatch(batch(0, 1, 0), func(batchInfo) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("callback error not returned: %v", err)
	}
}
