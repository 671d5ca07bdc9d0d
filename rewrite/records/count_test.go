package records_test

import (
	"encoding/binary"
	"testing"

	"github.com/kproxy/kproxy/rewrite/records"
)

// A producer's batch header may claim any record count; CountRecords
// sizes outputs, so a forged count must not turn into an allocation of
// gigabytes (the encryption filter sized its output from it).
func TestCountRecordsBoundsAForgedCount(t *testing.T) {
	raw := storedBatches(t, false, testRecords(3))
	if got := records.CountRecords(raw); got != 3 {
		t.Fatalf("CountRecords of 3 stored records = %d", got)
	}
	forged := append([]byte(nil), raw...)
	binary.BigEndian.PutUint32(forged[57:], 1<<31-1) // NumRecords
	if got := records.CountRecords(forged); got > len(forged) {
		t.Fatalf("CountRecords with a forged count = %d for %d bytes, want at most the bytes' worth", got, len(forged))
	}
}
