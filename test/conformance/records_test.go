package conformance

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// rec is one keyed record as produced. Values end in a sequence number
// that increases with the order of production.
type rec struct{ key, value string }

// got is one record as consumed.
type got struct {
	partition int32
	offset    int64
	key       string
	value     string
}

const numKeys = 24

// makeRecs makes n keyed records: keys repeat (numKeys of them), so that
// each partition gets several keys and each key several records.
func makeRecs(prefix string, n int) []rec { return makeRecsFrom(prefix, 0, n) }

// makeRecsFrom is makeRecs with sequence numbers from start on.
func makeRecsFrom(prefix string, start, n int) []rec {
	rs := make([]rec, n)
	for i := range rs {
		j := start + i
		rs[i] = rec{key: fmt.Sprintf("%s-k%02d", prefix, j%numKeys), value: fmt.Sprintf("%s-%06d", prefix, j)}
	}
	return rs
}

// seq is the sequence number at the end of a value.
func seq(value string) (int, bool) {
	i := strings.LastIndexAny(value, "-:.")
	n, err := strconv.Atoi(value[i+1:])
	return n, err == nil
}

// checkRecords fails unless gs holds exactly want (each once), and every
// partition was read in order: offsets and sequence numbers increase, and
// every key stays in one partition.
func checkRecords(t *testing.T, what string, gs []got, want []rec) {
	t.Helper()
	checkRecordsIn(t, what, gs, want, 2)
}

// checkRecordsIn is checkRecords for a topic whose records are in at least
// minParts partitions.
func checkRecordsIn(t *testing.T, what string, gs []got, want []rec, minParts int) {
	t.Helper()
	if len(gs) != len(want) {
		t.Errorf("%s: consumed %d records, want %d", what, len(gs), len(want))
	}
	seen := make(map[rec]int, len(gs))
	for _, g := range gs {
		seen[rec{g.key, g.value}]++
	}
	missing, dup := 0, 0
	for _, r := range want {
		switch seen[r] {
		case 0:
			if missing++; missing <= 3 {
				t.Errorf("%s: missing %s=%s", what, r.key, r.value)
			}
		case 1:
		default:
			if dup++; dup <= 3 {
				t.Errorf("%s: %s=%s consumed %d times", what, r.key, r.value, seen[r])
			}
		}
		delete(seen, r)
	}
	extra := 0
	for r := range seen {
		if extra++; extra <= 3 {
			t.Errorf("%s: unexpected record %s=%s", what, r.key, r.value)
		}
	}
	if missing+dup+extra > 0 {
		t.Errorf("%s: %d missing, %d duplicated, %d unexpected", what, missing, dup, extra)
	}
	checkOrder(t, what, gs, minParts)
}

// checkOrder fails unless, per partition, offsets and sequence numbers
// strictly increase, and each key is in one partition only.
func checkOrder(t *testing.T, what string, gs []got, minParts int) {
	t.Helper()
	type last struct {
		offset int64
		seq    int
	}
	lasts := map[int32]last{}
	keyPart := map[string]int32{}
	bad := 0
	for _, g := range gs {
		s, ok := seq(g.value)
		if !ok {
			t.Errorf("%s: value %q has no sequence number", what, g.value)
			return
		}
		if l, ok := lasts[g.partition]; ok && (g.offset <= l.offset || s <= l.seq) {
			if bad++; bad <= 3 {
				t.Errorf("%s: partition %d: offset %d (seq %d) after offset %d (seq %d)", what, g.partition, g.offset, s, l.offset, l.seq)
			}
		}
		lasts[g.partition] = last{g.offset, s}
		if p, ok := keyPart[g.key]; ok && p != g.partition {
			if bad++; bad <= 3 {
				t.Errorf("%s: key %s in partitions %d and %d", what, g.key, p, g.partition)
			}
		}
		keyPart[g.key] = g.partition
	}
	if len(gs) > numKeys && len(lasts) < minParts {
		t.Errorf("%s: all records came from %d partition(s); keys should spread them", what, len(lasts))
	}
}
