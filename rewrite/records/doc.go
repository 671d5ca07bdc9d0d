// Package records lets a proxy's filter change the records that Kafka
// record batches carry: the Records bytes of a Produce request partition
// or of a Fetch response partition.
//
// A Rewriter walks the batches those bytes hold, hands each record to a
// Func, and returns bytes a broker or a client accepts: batches in which
// the Func changed nothing are copied byte for byte; changed batches are
// re-encoded with the same header (base offset, producer id, epoch, base
// sequence, timestamps, attributes, last offset delta, record count),
// recompressed with the codec they came with, and given a new length and
// CRC-32C. So an idempotent or transactional producer's sequence numbers
// stay valid through the rewrite.
//
// Control batches (transaction markers) are checked like the others but
// never handed to the Func. What is passed through unread, and reported in
// the Summary so that a caller can refuse or let it through:
//
//   - message sets of magic 0 and 1, which predate record batches;
//   - a truncated last batch, which a Fetch response may end with.
//
// A batch that is malformed, fails its CRC, declares or decompresses to
// more than the Rewriter's limit, or uses an unknown codec is an error
// (ErrMalformed, ErrCorrupt, ErrTooLarge), never a panic: the caller
// refuses that partition. A Rewriter reuses its buffers and codec state
// from call to call, so that steady-state rewriting allocates nothing per
// record; it is not safe for concurrent use (keep one per goroutine or in
// a sync.Pool).
//
// The wire format is Kafka's RecordBatch v2; see
// https://kafka.apache.org/documentation/#recordbatch.
package records
