package largemessage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/errclass"
	"github.com/kproxy/kproxy/internal/largemessage/largemessageconfig"
	"github.com/kproxy/kproxy/internal/objectstore"
)

// memStore is an in-process bucket for the filter's unit tests; the
// end-to-end tests use SeaweedFS.
type memStore struct {
	mu      sync.Mutex
	objects map[string][]byte
	gets    []string
	putsOK  int // Puts that succeed before the others fail; -1 all
}

func (m *memStore) Bucket() string { return "unit" }

func (m *memStore) Put(_ context.Context, key string, value io.Reader, size int64, _ string) (objectstore.Stored, error) {
	b, err := io.ReadAll(value)
	if err != nil || int64(len(b)) != size {
		return objectstore.Stored{}, errclass.Mark(objectstore.ErrRejected, fmt.Errorf("short value"))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.putsOK == 0 {
		return objectstore.Stored{}, errclass.Mark(objectstore.ErrRetriable, fmt.Errorf("store down"))
	}
	m.putsOK--
	if m.objects == nil {
		m.objects = map[string][]byte{}
	}
	m.objects[key] = b
	sum := sha256.Sum256(b)
	return objectstore.Stored{Size: size, SHA256: hex.EncodeToString(sum[:])}, nil
}

func (m *memStore) Get(_ context.Context, key string) (io.ReadCloser, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gets = append(m.gets, key)
	b, ok := m.objects[key]
	if !ok {
		return nil, 0, errclass.Mark(objectstore.ErrMissing, fmt.Errorf("no %s", key))
	}
	return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
}

func (m *memStore) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.objects)
}

func (m *memStore) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, key)
	return nil
}

// newTestFilter is a filter offloading values over threshold on topics
// matching "media.*" to store.
func newTestFilter(t *testing.T, store Store, threshold int64) *Filter {
	t.Helper()
	cfg := &largemessageconfig.Config{Store: largemessageconfig.StoreConfig{S3: &largemessageconfig.S3Config{Bucket: "unit", Region: "r"}},
		Topics: []largemessageconfig.TopicRule{{Match: "media.*", ThresholdBytes: threshold}}}
	f, err := New(cfg, Options{Env: filter.Env{Log: zerolog.Nop()}, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// testRecord is one record of a test batch.
type testRecord struct {
	key, value []byte
	headers    [][2]string
}

// batch encodes records as one uncompressed v2 record batch at
// baseOffset, with attrs (the transactional and control bits) and pid.
func batch(baseOffset int64, attrs int16, pid int64, records ...testRecord) []byte {
	var body []byte
	for i, r := range records {
		var rec []byte
		rec = append(rec, 0)
		rec = binary.AppendVarint(rec, 0)
		rec = binary.AppendVarint(rec, int64(i))
		rec = appendField(rec, r.key)
		rec = appendField(rec, r.value)
		rec = binary.AppendVarint(rec, int64(len(r.headers)))
		for _, h := range r.headers {
			rec = appendField(rec, []byte(h[0]))
			rec = appendField(rec, []byte(h[1]))
		}
		body = append(binary.AppendVarint(body, int64(len(rec))), rec...)
	}
	b := make([]byte, 61, 61+len(body))
	be := binary.BigEndian
	be.PutUint64(b[0:], uint64(baseOffset))
	be.PutUint32(b[8:], uint32(61-12+len(body)))
	b[16] = 2
	be.PutUint16(b[21:], uint16(attrs))
	be.PutUint32(b[23:], uint32(max(len(records)-1, 0)))
	be.PutUint64(b[43:], uint64(pid))
	be.PutUint32(b[57:], uint32(len(records)))
	b = append(b, body...)
	be.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func appendField(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	return append(binary.AppendVarint(dst, int64(len(b))), b...)
}
