package largemessage

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/rewrite/records"
)

// gzipped is b, an uncompressed batch of the batch helper, with its
// records compressed with gzip.
func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(b[61:]); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	out := append(append([]byte(nil), b[:61]...), z.Bytes()...)
	be := binary.BigEndian
	be.PutUint32(out[8:], uint32(len(out)-12))
	be.PutUint16(out[21:], be.Uint16(out[21:])|1)
	be.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// fetchBody is the body of a v12 (flexible) Fetch response of batches.
func fetchBody(topic string, batches []byte) []byte {
	resp := fetchResponse(topic, batches)
	resp.Version = 12
	return resp.AppendTo(nil)
}

// Produced batches with nothing to offload are forwarded as they came,
// and fetched ones with no pointer are not decoded for the filter; a
// pointer in a compressed batch is still found, and resolved.
func TestIdleBatchesPassUnread(t *testing.T) {
	store := &memStore{putsOK: -1}
	f := newTestFilter(t, store, 10)
	small := batch(0, 0, 7, testRecord{key: []byte("k"), value: []byte("tiny")})
	req := produceRequest("media.x", small)
	if v := f.produce(&filter.Conn{}, req); v.Modified || v.Close != nil || v.Respond != nil {
		t.Fatalf("small records: verdict %+v, want forwarded as they came", v)
	}
	// A CRC the rewriter would refuse shows whether it read the batch:
	// left to the broker, which checks it, when nothing can be offloaded
	// (the records area within the threshold, no trigger header).
	badCRC := bytes.Clone(small)
	badCRC[17] ^= 0xff
	req = produceRequest("media.x", badCRC)
	if v := newTestFilter(t, store, 1000).produce(&filter.Conn{}, req); v.Modified || v.Close != nil || v.Respond != nil || !bytes.Equal(req.Topics[0].Partitions[0].Records, badCRC) {
		t.Fatalf("small records, bad CRC: verdict %+v, want forwarded unread as they came", v)
	}
	if fetchMayResolve(12, fetchBody("media.x", small)) {
		t.Error("a fetch of small uncompressed records: decoded for the filter")
	}
	if !fetchMayResolve(12, fetchBody("media.x", gzipped(t, small))) {
		t.Error("a fetch of a compressed batch: not decoded for the filter, which cannot see into it")
	}
	if !fetchMayResolve(4, fetchBody("media.x", small)) {
		t.Error("a v4 fetch, which the raw walk does not read: not decoded")
	}

	big := bytes.Repeat([]byte("b"), 100)
	req = produceRequest("media.x", gzipped(t, batch(0, 0, 7, testRecord{key: []byte("big"), value: big})))
	if v := f.produce(&filter.Conn{}, req); !v.Modified {
		t.Fatalf("a large value: verdict %+v, want it offloaded", v)
	}
	stored := req.Topics[0].Partitions[0].Records
	if stored[21+1]&7 == 0 {
		t.Fatal("the offloaded batch is no longer compressed")
	}
	if !fetchMayResolve(12, fetchBody("media.x", stored)) {
		t.Fatal("a fetch of a compressed pointer: not decoded for the filter")
	}
	// Records of some size are read by their framing on fetch too: a
	// value that does not start with '{' is no pointer, whatever it
	// holds, and an uncompressed pointer is found.
	sized := append([]byte(`x"kfs_lfs"`), bytes.Repeat([]byte("s"), 200)...)
	if fetchMayResolve(12, fetchBody("media.x", batch(0, 0, 7, testRecord{value: sized}, testRecord{value: sized}))) {
		t.Error("a fetch of records of some size without a pointer: decoded for the filter")
	}
	req = produceRequest("media.x", batch(0, 0, 7, testRecord{value: bytes.Clone(sized)}, testRecord{value: big}))
	if v := f.produce(&filter.Conn{}, req); !v.Modified {
		t.Fatalf("a large value: verdict %+v, want it offloaded", v)
	}
	if !fetchMayResolve(12, fetchBody("media.x", req.Topics[0].Partitions[0].Records)) {
		t.Error("a fetch of an uncompressed pointer after a record of some size: not decoded for the filter")
	}
	resp := fetchResponse("media.x", stored)
	f.fetch(resp, fetchLimits{total: 1 << 30}, nil, nil)
	if got := decode(t, resp.Topics[0].Partitions[0].RecordBatches); len(got) != 1 || !bytes.Equal(got[0].Value, big) {
		t.Fatalf("the compressed pointer resolved to %d records", len(got))
	}
	if v := f.fetchRequest(&filter.Conn{}, kmsg.NewPtrFetchRequest()); v.InspectResponse == nil || v.OnFetchSpliced == nil {
		t.Error("the fetch hook is asked for every response: no InspectResponse")
	}
}

// A produce with nothing to offload is decided from its raw bytes, never
// decoded; one with a large value, or to a topic id not yet named, goes
// to the typed handler.
func TestProduceDecidedRawWhenIdle(t *testing.T) {
	f := newTestFilter(t, &memStore{putsOK: -1}, 1000)
	small := batch(0, 0, 7, testRecord{key: []byte("k"), value: []byte("tiny")})
	big := batch(0, 0, 7, testRecord{key: []byte("k"), value: bytes.Repeat([]byte("b"), 2000)})
	trigger := [][2]string{{"other", "1"}, {"LFS_BLOB", ""}}
	smallMarked := batch(0, 0, 7, testRecord{key: []byte("k"), value: []byte("tiny")}, testRecord{value: []byte("x"), headers: trigger})
	// Records of some size are read by their framing, not searched for
	// the trigger's name.
	sized := bytes.Repeat([]byte("s"), 200)
	if !records.SkimBeatsSearch(batch(0, 0, 7, testRecord{value: sized})[61:]) {
		t.Fatal("records of 200 bytes are searched, not read by their framing")
	}
	medium := batch(0, 0, 7, testRecord{value: sized}, testRecord{value: append([]byte("LFS_BLOB in a value"), sized...)})
	mediumMarked := batch(0, 0, 7, testRecord{value: sized}, testRecord{value: sized, headers: trigger})
	body := func(version int16, records []byte, topics ...string) []byte {
		req := produceRequest("", records)
		req.Version = version
		req.Topics[0].Topic = topics[0]
		if version >= 13 {
			req.Topics[0].Topic, req.Topics[0].TopicID = "", [16]byte{9}
		}
		return req.AppendTo(nil)
	}
	for _, tc := range []struct {
		name    string
		version int16
		records []byte
		topic   string
		decided bool
	}{
		{"small values", 9, small, "media.x", true},
		{"a topic no rule matches", 9, big, "other", true},
		{"a large value", 9, big, "media.x", false},
		{"a small record with the trigger header", 9, smallMarked, "media.x", false},
		{"records of some size, the trigger's name only in a value", 9, medium, "media.x", true},
		{"records of some size, one with the trigger header", 9, mediumMarked, "media.x", false},
		{"a topic id not yet named", 13, small, "media.x", false},
	} {
		if v, decided := f.produceRaw(&filter.Conn{}, tc.version, body(tc.version, tc.records, tc.topic)); decided != tc.decided || v.Modified || v.Respond != nil || v.Close != nil {
			t.Errorf("%s: decided %v (verdict %+v), want %v", tc.name, decided, v, tc.decided)
		}
	}
}
