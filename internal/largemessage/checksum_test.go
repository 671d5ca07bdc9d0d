package largemessage

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/largemessage/pointer"
)

// The producer's checksum in the trigger header (KafScale's LFS_BLOB,
// with LFS_BLOB_ALG) is checked against the value and written into the
// pointer; a wrong one, or one given with the algorithm none, refuses the
// partition with INVALID_RECORD, as KafScale's proxy refuses the produce.
func TestProducerChecksum(t *testing.T) {
	value := []byte("the value")
	sha := sha256.Sum256(value)
	md := md5.Sum(value)
	for _, c := range []struct {
		name    string
		headers [][2]string
		ok      bool
		alg     string
	}{
		{"sha256", [][2]string{{"LFS_BLOB", hex.EncodeToString(sha[:])}}, true, "sha256"},
		{"sha256 upper case with spaces", [][2]string{{"LFS_BLOB", " " + strings.ToUpper(hex.EncodeToString(sha[:])) + " "}}, true, "sha256"},
		{"md5", [][2]string{{"LFS_BLOB", hex.EncodeToString(md[:])}, {"LFS_BLOB_ALG", "md5"}}, true, "md5"},
		{"no checksum", [][2]string{{"LFS_BLOB", ""}}, true, ""},
		{"wrong sha256", [][2]string{{"LFS_BLOB", strings.Repeat("0", 64)}}, false, ""},
		{"wrong md5", [][2]string{{"LFS_BLOB", strings.Repeat("0", 32)}, {"LFS_BLOB_ALG", "md5"}}, false, ""},
		{"checksum with none", [][2]string{{"LFS_BLOB", "abcd"}, {"LFS_BLOB_ALG", "none"}}, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := &memStore{putsOK: -1}
			f := newTestFilter(t, store, 1<<20)
			req := produceRequest("media.x", batch(0, 0, 7, testRecord{value: value, headers: c.headers}))
			v := f.produce(&filter.Conn{}, req)
			if !c.ok {
				resp, isResp := v.Respond.(*kmsg.ProduceResponse)
				if !isResp || resp.Topics[0].Partitions[0].ErrorCode != kerr.InvalidRecord.Code {
					t.Fatalf("verdict %+v, want the partition refused with INVALID_RECORD", v)
				}
				waitObjects(t, store, 0)
				return
			}
			if v.Respond != nil {
				t.Fatalf("refused: %+v", v.Respond)
			}
			p, err := pointer.Decode(decode(t, req.Topics[0].Partitions[0].Records)[0].Value)
			if err != nil {
				t.Fatal(err)
			}
			if p.ChecksumAlg != c.alg || (c.alg != "" && p.Checksum == "") || p.SHA256 != hex.EncodeToString(sha[:]) {
				t.Errorf("pointer checksum %q %q sha256 %s", p.ChecksumAlg, p.Checksum, p.SHA256)
			}
		})
	}
}
