package records_test

import (
	"bytes"
	"fmt"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/rewrite/records"
)

// A filter upper-cases the values of a Produce partition's records. The
// Func reuses one buffer for every record: the Rewriter copies the new
// value before calling it again.
func ExampleRewriter_Rewrite() {
	produced := testkit.RecordBatch("hello", "world") // a partition's Records
	rw := records.NewRewriter(1 << 20)                // one per goroutine, or in a sync.Pool
	var buf []byte
	out, sum, err := rw.Rewrite(nil, produced, func(_ *records.Batch, r *records.Record) error {
		if r.Value == nil {
			return nil // a tombstone stays null
		}
		buf = buf[:0]
		for _, c := range r.Value { // ASCII only, for the example
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			buf = append(buf, c)
		}
		r.Value = buf
		return nil
	})
	if err != nil {
		fmt.Println("refuse the partition:", err)
		return
	}
	fmt.Println(sum.Records, "records,", sum.Changed, "batch rewritten")
	fmt.Println(bytes.Contains(out, []byte("HELLO")), bytes.Contains(out, []byte("WORLD")))
	// Output:
	// 2 records, 1 batch rewritten
	// true true
}
