package objectstore_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kproxy/kproxy/internal/objectstore"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/seaweed"
)

func newStore(t *testing.T, srv *seaweed.Server, edit func(*objectstore.Config)) *objectstore.S3 {
	t.Helper()
	cfg := objectstore.Config{Endpoint: srv.Endpoint(), Bucket: seaweed.Bucket, Region: seaweed.Region,
		PathStyle: true, PartSize: objectstore.MinPartSize, CallTimeout: 20 * time.Second, Credentials: seaweed.Credentials()}
	if edit != nil {
		edit(&cfg)
	}
	store, err := objectstore.NewS3(testkit.Context(t, 5*time.Second), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// value is n reproducible pseudo-random bytes, streamed.
func value(seed uint64, n int64) io.Reader {
	return io.LimitReader(rand.NewChaCha8([32]byte{byte(seed)}), n)
}

func sha256Of(t *testing.T, r io.Reader) string {
	t.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// putAndCheck stores n bytes and checks the SHA-256 Put returns and the
// bytes Get streams back against the value's own.
func putAndCheck(t *testing.T, store *objectstore.S3, key string, seed uint64, n int64) {
	t.Helper()
	want := sha256Of(t, value(seed, n))
	stored, err := store.Put(testkit.Context(t, time.Minute), key, value(seed, n), n, "application/octet-stream")
	if err != nil {
		t.Fatalf("Put %d bytes: %v", n, err)
	}
	if stored.SHA256 != want || stored.Size != n {
		t.Fatalf("Put returned %+v, want size %d sha256 %s", stored, n, want)
	}
	body, size, err := store.Get(testkit.Context(t, time.Minute), key)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	defer body.Close()
	if size != n {
		t.Errorf("Get size = %d, want %d", size, n)
	}
	if got := sha256Of(t, body); got != want {
		t.Errorf("Get returned bytes with sha256 %s, want %s", got, want)
	}
}

func TestS3AgainstSeaweedFS(t *testing.T) {
	srv := seaweed.Start(t)
	store := newStore(t, srv, nil)

	t.Run("1 KiB in one PUT", func(t *testing.T) {
		putAndCheck(t, store, "small/obj-1", 1, 1<<10)
	})
	t.Run("20 MiB as a multipart upload", func(t *testing.T) {
		putAndCheck(t, store, "big/obj-20m", 2, 20<<20)
		head, err := srv.Admin.HeadObject(testkit.Context(t, 10*time.Second), &s3.HeadObjectInput{
			Bucket: aws.String(seaweed.Bucket), Key: aws.String("big/obj-20m")})
		if err != nil {
			t.Fatal(err)
		}
		// S3's ETag of a multipart object ends in -<parts>: 20 MiB in 5 MiB parts.
		if etag := aws.ToString(head.ETag); !strings.HasSuffix(strings.Trim(etag, `"`), "-4") {
			t.Errorf("ETag %s: not a 4-part upload", etag)
		}
	})
	t.Run("empty value", func(t *testing.T) {
		putAndCheck(t, store, "small/empty", 3, 0)
	})
	t.Run("missing key", func(t *testing.T) {
		_, _, err := store.Get(testkit.Context(t, 10*time.Second), "no/such/key")
		wantClass(t, err, objectstore.ErrMissing)
	})
	t.Run("deleted key is missing", func(t *testing.T) {
		putAndCheck(t, store, "small/to-delete", 4, 100)
		if err := store.Delete(testkit.Context(t, 10*time.Second), "small/to-delete"); err != nil {
			t.Fatal(err)
		}
		_, _, err := store.Get(testkit.Context(t, 10*time.Second), "small/to-delete")
		wantClass(t, err, objectstore.ErrMissing)
	})
	t.Run("value shorter than its size", func(t *testing.T) {
		for _, n := range []int64{100, 12 << 20} { // one PUT, multipart
			_, err := store.Put(testkit.Context(t, time.Minute), "short/obj", value(5, n-1), n, "")
			wantClass(t, err, objectstore.ErrRejected)
			if !strings.Contains(err.Error(), "1 B missing") {
				t.Errorf("error %v does not say by how much the value was short", err)
			}
			_, _, err = store.Get(testkit.Context(t, 10*time.Second), "short/obj")
			wantClass(t, err, objectstore.ErrMissing)
		}
		uploads, err := srv.Admin.ListMultipartUploads(testkit.Context(t, 10*time.Second), &s3.ListMultipartUploadsInput{Bucket: aws.String(seaweed.Bucket)})
		if err != nil {
			t.Fatal(err)
		}
		if len(uploads.Uploads) != 0 {
			t.Errorf("the failed multipart upload was not aborted: %d uploads open", len(uploads.Uploads))
		}
	})
	t.Run("value longer than its size", func(t *testing.T) {
		_, err := store.Put(testkit.Context(t, time.Minute), "long/obj", value(6, 101), 100, "")
		wantClass(t, err, objectstore.ErrRejected)
	})
	t.Run("wrong credentials", func(t *testing.T) {
		wrong := newStore(t, srv, func(c *objectstore.Config) { c.Credentials = seaweed.WrongCredentials() })
		_, err := wrong.Put(testkit.Context(t, 10*time.Second), "small/wrong", value(7, 10), 10, "")
		wantClass(t, err, objectstore.ErrRejected)
		_, _, err = wrong.Get(testkit.Context(t, 10*time.Second), "small/obj-1")
		wantClass(t, err, objectstore.ErrRejected)
	})
	t.Run("no such bucket", func(t *testing.T) {
		other := newStore(t, srv, func(c *objectstore.Config) { c.Bucket = "not-created" })
		_, _, err := other.Get(testkit.Context(t, 10*time.Second), "small/obj-1")
		wantClass(t, err, objectstore.ErrRejected)
	})
	t.Run("100 MiB streams with bounded memory", func(t *testing.T) { testBoundedMemory(t, store) })
	t.Run("stopped server is retriable", func(t *testing.T) { testStoppedServer(t, srv, store) }) // last: stops the server
}

// A 100 MiB object goes in and comes out with the heap growing by about
// one part on Put and by a small, size-independent amount on Get.
func testBoundedMemory(t *testing.T, store *objectstore.S3) {
	const n = 100 << 20

	var peak heapPeak
	peak.start()
	stored, err := store.Put(testkit.Context(t, 2*time.Minute), "big/obj-100m", peak.reader(value(8, n)), n, "")
	if err != nil {
		t.Fatal(err)
	}
	putGrowth := peak.growth()
	want := sha256Of(t, value(8, n))
	if stored.SHA256 != want {
		t.Fatalf("Put sha256 %s, want %s", stored.SHA256, want)
	}

	peak.start()
	body, size, err := store.Get(testkit.Context(t, 2*time.Minute), "big/obj-100m")
	if err != nil {
		t.Fatal(err)
	}
	got := sha256Of(t, peak.reader(body))
	body.Close()
	getGrowth := peak.growth()
	if size != n || got != want {
		t.Fatalf("Get: %d bytes, sha256 %s; want %d, %s", size, got, n, want)
	}
	t.Logf("heap growth for a %d MiB object: Put %.1f MiB (part size %d MiB), Get %.1f MiB",
		n>>20, float64(putGrowth)/(1<<20), objectstore.MinPartSize>>20, float64(getGrowth)/(1<<20))
	if putGrowth > 4*objectstore.MinPartSize {
		t.Errorf("Put grew the heap by %d bytes, want about one %d-byte part", putGrowth, objectstore.MinPartSize)
	}
	if getGrowth > 16<<20 {
		t.Errorf("Get grew the heap by %d bytes for a %d-byte object: not streamed", getGrowth, n)
	}
}

// A store that is down is retriable, not a rejection.
func testStoppedServer(t *testing.T, srv *seaweed.Server, store *objectstore.S3) {
	putAndCheck(t, store, "small/before-stop", 9, 10)
	srv.Stop()
	_, err := store.Put(testkit.Context(t, 30*time.Second), "small/after-stop", value(9, 10), 10, "")
	wantClass(t, err, objectstore.ErrRetriable)
	_, _, err = store.Get(testkit.Context(t, 30*time.Second), "small/before-stop")
	wantClass(t, err, objectstore.ErrRetriable)
	err = store.Delete(testkit.Context(t, 30*time.Second), "small/before-stop")
	wantClass(t, err, objectstore.ErrRetriable)
}

func wantClass(t *testing.T, err, class error) {
	t.Helper()
	classes := []error{objectstore.ErrMissing, objectstore.ErrRetriable, objectstore.ErrRejected}
	if !errors.Is(err, class) {
		t.Fatalf("error %v, want class %v", err, class)
	}
	for _, other := range classes {
		if other != class && errors.Is(err, other) {
			t.Fatalf("error %v is in two classes: %v and %v", err, class, other)
		}
	}
}

// heapPeak samples the live heap while a stream is read, every 4 MiB.
type heapPeak struct{ base, max uint64 }

func (h *heapPeak) start() {
	runtime.GC()
	h.base, h.max = heapInUse(), 0
}

func (h *heapPeak) sample() {
	if in := heapInUse(); in > h.max {
		h.max = in
	}
}

func (h *heapPeak) growth() int64 {
	h.sample()
	return int64(h.max) - int64(h.base)
}

func (h *heapPeak) reader(r io.Reader) io.Reader { return &sampling{r: r, peak: h} }

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

type sampling struct {
	r     io.Reader
	peak  *heapPeak
	since int
}

func (s *sampling) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if s.since += n; s.since >= 4<<20 {
		s.since = 0
		s.peak.sample()
	}
	return n, err
}
