package wire

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// summaryBody encodes a Produce request at version with kmsg: topics named
// t0, t1, ... (ids 1, 2, ... from v13), each with parts partitions whose
// records are records (nil: null).
func summaryBody(version int16, txnID *string, topics, parts int, records []byte) []byte {
	r := kmsg.NewPtrProduceRequest()
	r.SetVersion(version)
	r.TransactionID = txnID
	r.Acks = -1
	for i := 0; i < topics; i++ {
		t := kmsg.NewProduceRequestTopic()
		t.Topic = fmt.Sprintf("t%d", i)
		t.TopicID[15] = byte(i + 1)
		for j := 0; j < parts; j++ {
			p := kmsg.NewProduceRequestTopicPartition()
			p.Partition = int32(j * 3)
			p.Records = records
			t.Partitions = append(t.Partitions, p)
		}
		r.Topics = append(r.Topics, t)
	}
	return r.AppendTo(nil)
}

// compareWithKmsg parses body at version with the summary and with kmsg's
// decoder and reports any difference: in whether it decodes, and in every
// field the summary reads.
func compareWithKmsg(version int16, body []byte) error {
	var s ProduceSummary
	serr := s.Parse(version, body)
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(version)
	kerr := req.ReadFrom(body)
	if errors.Is(serr, ErrSummaryTooLarge) {
		return nil // the caller decodes it: TestProduceSummaryTooLarge checks the bound
	}
	if (serr == nil) != (kerr == nil) {
		return fmt.Errorf("summary error %v, kmsg error %v", serr, kerr)
	}
	if serr != nil {
		if !errors.Is(serr, ErrMalformed) {
			return fmt.Errorf("error %v does not wrap ErrMalformed", serr)
		}
		return nil
	}
	if s.HasTransactionalID != (req.TransactionID != nil) || req.TransactionID != nil && s.TransactionalID != *req.TransactionID {
		return fmt.Errorf("transactional id %q/%v, kmsg %v", s.TransactionalID, s.HasTransactionalID, req.TransactionID)
	}
	if s.Acks != req.Acks {
		return fmt.Errorf("acks %d, kmsg %d", s.Acks, req.Acks)
	}
	if s.Topics() != len(req.Topics) {
		return fmt.Errorf("%d topics, kmsg %d", s.Topics(), len(req.Topics))
	}
	for i, kt := range req.Topics {
		name, id, parts := s.Topic(i)
		if name != kt.Topic || id != kt.TopicID || parts != len(kt.Partitions) {
			return fmt.Errorf("topic %d: %q %x %d partitions, kmsg %q %x %d", i, name, id, parts, kt.Topic, kt.TopicID, len(kt.Partitions))
		}
		for j, kp := range kt.Partitions {
			p, records := s.Partition(i, j)
			if p != kp.Partition || !bytes.Equal(records, kp.Records) || (records == nil) != (kp.Records == nil) {
				return fmt.Errorf("topic %d partition %d: %d %x (nil %v), kmsg %d %x (nil %v)", i, j, p, records, records == nil, kp.Partition, kp.Records, kp.Records == nil)
			}
		}
	}
	return nil
}

func produceVersions() []int16 {
	var vs []int16
	for v := int16(0); v <= MaxVersion(ProduceKey); v++ {
		vs = append(vs, v)
	}
	return vs
}

func TestProduceSummaryMatchesKmsg(t *testing.T) {
	txn := "txn-1"
	for _, v := range produceVersions() {
		for name, body := range map[string][]byte{
			"empty":            summaryBody(v, nil, 0, 0, nil),
			"one":              summaryBody(v, nil, 1, 1, []byte("batch")),
			"many":             summaryBody(v, &txn, 3, 4, bytes.Repeat([]byte{7}, 300)),
			"null records":     summaryBody(v, nil, 2, 2, nil),
			"empty records":    summaryBody(v, nil, 1, 2, []byte{}),
			"trailing garbage": append(summaryBody(v, nil, 1, 1, []byte("x")), 1, 2, 3),
		} {
			if err := compareWithKmsg(v, body); err != nil {
				t.Errorf("v%d %s: %v", v, name, err)
			}
			var s ProduceSummary
			if err := s.Parse(v, body); err != nil && name != "trailing garbage" {
				t.Errorf("v%d %s: %v", v, name, err)
			}
		}
	}
}

// Every truncation of a valid body, and every value of every byte of one,
// decodes (or not) exactly as kmsg decodes it.
func TestProduceSummaryAgreesWithKmsgOnDamagedBodies(t *testing.T) {
	txn := "t"
	for _, v := range []int16{3, 8, 9, 12, 13} {
		body := summaryBody(v, &txn, 2, 2, []byte("rec"))
		for n := 0; n < len(body); n++ {
			if err := compareWithKmsg(v, body[:n]); err != nil {
				t.Errorf("v%d truncated to %d of %d bytes: %v", v, n, len(body), err)
			}
			for c := 0; c < 256; c++ {
				damaged := bytes.Clone(body)
				damaged[n] = byte(c)
				if err := compareWithKmsg(v, damaged); err != nil {
					t.Errorf("v%d byte %d set to %#x: %v", v, n, c, err)
				}
			}
		}
	}
}

// A count the bytes cannot hold is refused before anything is allocated
// for it, and a reused summary parses without allocating.
func TestProduceSummaryBoundsMemory(t *testing.T) {
	hostile := []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0x00, 0x7f, 0xff, 0xff} // v3: null id, acks, timeout, 8 Mi topics
	hostile = append(hostile, make([]byte, 1<<20)...)
	var s ProduceSummary
	if allocs := testing.AllocsPerRun(10, func() {
		if err := s.Parse(3, hostile); !errors.Is(err, ErrMalformed) {
			t.Fatalf("8 Mi topics in 1 MiB: %v", err)
		}
	}); allocs != 0 {
		t.Errorf("a refused count allocated %.0f times", allocs)
	}
	body := summaryBody(9, nil, 10, 10, []byte("records"))
	if err := s.Parse(9, body); err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		if err := s.Parse(9, body); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("parsing into a reused summary allocated %.0f times", allocs)
	}
	s.Reset()
	if s.body != nil || s.Topics() != 0 {
		t.Error("Reset kept the body or the topics")
	}
}

// FuzzProduceSummary: for any version and body, the summary decodes
// exactly what kmsg's decoder decodes, field for field, and refuses exactly
// what it refuses; it never panics.
func FuzzProduceSummary(f *testing.F) {
	txn := "txn"
	for _, v := range produceVersions() {
		f.Add(v, summaryBody(v, nil, 1, 1, []byte("records")))
		f.Add(v, summaryBody(v, &txn, 2, 3, nil))
	}
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		if version < 0 || version > MaxVersion(ProduceKey) {
			return
		}
		if err := compareWithKmsg(version, body); err != nil {
			t.Fatal(err)
		}
	})
}

// A valid request beyond a summary's bounds is not summarized, and the
// summary stays within them.
func TestProduceSummaryTooLarge(t *testing.T) {
	var s ProduceSummary
	for _, tc := range []struct{ topics, parts int }{{MaxSummaryTopics + 1, 1}, {1, MaxSummaryPartitions + 1}, {4, MaxSummaryPartitions/4 + 1}} {
		body := summaryBody(9, nil, tc.topics, tc.parts, nil)
		if err := s.Parse(9, body); !errors.Is(err, ErrSummaryTooLarge) {
			t.Errorf("%d topics of %d partitions: %v, want ErrSummaryTooLarge", tc.topics, tc.parts, err)
		}
		if cap(s.topics) > MaxSummaryTopics || cap(s.partitions) > MaxSummaryPartitions {
			t.Errorf("summary grew to %d topics, %d partitions", cap(s.topics), cap(s.partitions))
		}
	}
	if err := s.Parse(9, summaryBody(9, nil, MaxSummaryTopics, MaxSummaryPartitions/MaxSummaryTopics, nil)); err != nil {
		t.Errorf("a request at the bounds: %v", err)
	}
}
