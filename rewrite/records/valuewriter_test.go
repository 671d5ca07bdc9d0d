package records_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/kproxy/kproxy/rewrite/records"
)

// reverser is a ValueWriter appending the reverse of value, or extra
// bytes more than it says, or failing with err.
type reverser struct {
	value []byte
	extra int
	err   error
}

func (v *reverser) ValueLen() int { return len(v.value) }

func (v *reverser) AppendValue(dst []byte) ([]byte, error) {
	if v.err != nil {
		return dst, v.err
	}
	start := len(dst)
	dst = append(dst, v.value...)
	slices.Reverse(dst[start:])
	return append(dst, make([]byte, v.extra)...), nil
}

// reverseValuesFrom is reverseValues with each value written by a
// ValueWriter straight into the output.
func reverseValuesFrom(v *reverser) records.Func {
	return func(_ *records.Batch, r *records.Record) error {
		if r.Value == nil {
			return nil
		}
		v.value = r.Value
		r.ValueFrom = v
		return nil
	}
}

// TestValueWriterWritesAsValue: values written by a ValueWriter give the
// very bytes the same values set as Record.Value do, with every codec.
func TestValueWriterWritesAsValue(t *testing.T) {
	forEachStored(t, func(t *testing.T, _ string, raw []byte) {
		want, _, err := records.NewRewriter(limit).Rewrite(nil, raw, reverseValues())
		if err != nil {
			t.Fatal(err)
		}
		got, sum, err := records.NewRewriter(limit).Rewrite(nil, raw, reverseValuesFrom(&reverser{}))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || sum.Changed == 0 {
			t.Errorf("%d bytes, want %d (summary %+v)", len(got), len(want), sum)
		}
	})
}

// TestValueWriterErrors: a writer's error stops the rewrite, and so does
// a writer appending more than it said, whose record would be corrupt.
func TestValueWriterErrors(t *testing.T) {
	raw := storedBatches(t, false, testRecords(4))
	boom := errors.New("boom")
	if _, _, err := records.NewRewriter(limit).Rewrite(nil, raw, reverseValuesFrom(&reverser{err: boom})); !errors.Is(err, boom) {
		t.Errorf("failing writer: %v, want %v", err, boom)
	}
	if _, _, err := records.NewRewriter(limit).Rewrite(nil, raw, reverseValuesFrom(&reverser{extra: 1})); err == nil {
		t.Error("a writer appending more than it said: no error")
	}
}
