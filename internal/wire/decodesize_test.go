package wire

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// allMessages calls fn for a fresh request and response of every key and
// version kmsg knows.
func allMessages(fn func(key, version int16, response bool, m message)) {
	for key := int16(0); key <= MaxKnownKey(); key++ {
		for v := int16(0); v <= MaxVersion(key); v++ {
			if req := kmsg.RequestForKey(key); req != nil {
				req.SetVersion(v)
				fn(key, v, false, req)
			}
			if resp := kmsg.ResponseForKey(key); resp != nil {
				resp.SetVersion(v)
				fn(key, v, true, resp)
			}
		}
	}
}

func kind(response bool) string {
	if response {
		return "response"
	}
	return "request"
}

// fillRandom sets every exported field of v (a struct) to random values,
// with up to 3 elements per array, nested to depth.
func fillRandom(r *rand.Rand, v reflect.Value, depth int) {
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() || f.Type() == tagsType || v.Type().Field(i).Name == "Version" {
			continue
		}
		fillValue(r, f, depth)
	}
}

func fillValue(r *rand.Rand, f reflect.Value, depth int) {
	switch f.Kind() {
	case reflect.Bool:
		f.SetBool(r.IntN(2) == 1)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f.SetInt(int64(r.IntN(300)) - 10)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f.SetUint(uint64(r.IntN(300)))
	case reflect.Float32, reflect.Float64:
		f.SetFloat(r.Float64())
	case reflect.Array:
		for i := 0; i < f.Len(); i++ {
			f.Index(i).SetUint(uint64(r.IntN(256)))
		}
	case reflect.String:
		f.SetString(randomString(r))
	case reflect.Pointer:
		if r.IntN(3) == 0 || depth == 0 {
			f.Set(reflect.Zero(f.Type()))
			return
		}
		p := reflect.New(f.Type().Elem())
		fillValue(r, p.Elem(), depth-1)
		f.Set(p)
	case reflect.Slice:
		if f.Type().Elem().Kind() == reflect.Uint8 {
			if r.IntN(4) == 0 {
				f.SetBytes(nil)
			} else {
				f.SetBytes([]byte(randomString(r)))
			}
			return
		}
		n := 0
		if depth > 0 {
			n = r.IntN(4)
		}
		s := reflect.MakeSlice(f.Type(), n, n)
		for i := range n {
			fillValue(r, s.Index(i), depth-1)
		}
		f.Set(s)
	case reflect.Struct:
		if f.Type() != tagsType {
			fillRandom(r, f, depth)
		}
	}
}

func randomString(r *rand.Rand) string {
	b := make([]byte, r.IntN(6))
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

// TestShapesMatchKmsg: for every request and response kmsg knows, at every
// version, the learned shape walks kmsg's encoding of randomly filled
// messages exactly to its end, so DecodedSize never refuses (nor misreads)
// a message kmsg itself writes.
func TestShapesMatchKmsg(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	checked := 0
	allMessages(func(key, version int16, response bool, m message) {
		s := APIs().shape(key, version, response)
		if s == nil {
			t.Fatalf("%s v%d %s: no shape", APIName(key), version, kind(response))
		}
		for range 20 {
			fresh := reflect.New(reflect.TypeOf(m).Elem())
			fillRandom(r, fresh.Elem(), 5)
			msg := fresh.Interface().(message)
			msg.SetVersion(version)
			body := msg.AppendTo(nil)
			w := sizeWalker{b: body, flexible: s.flexible, limit: 1 << 40}
			if err := w.shape(s); err != nil || len(w.b) != 0 {
				t.Fatalf("%s v%d %s: walk of kmsg's %d-byte encoding: err %v, %d bytes left\n%x",
					APIName(key), version, kind(response), len(body), err, len(w.b), body)
			}
			checked++
		}
	})
	t.Logf("walked %d encodings", checked)
}

// manyElements fills every array of v with n default elements, recursing
// into each element's own arrays to depth: the densest valid encoding of
// array slots, the case where kmsg's decoding outgrows the wire most.
func manyElements(v reflect.Value, n, depth int) {
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch {
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() != reflect.Uint8 && depth > 0:
			s := reflect.MakeSlice(f.Type(), n, n)
			for j := range n {
				s.Index(j).Set(newDefault(f.Type().Elem()))
				if s.Index(j).Kind() == reflect.Struct {
					manyElements(s.Index(j), n, depth-1)
				}
			}
			f.Set(s)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct && depth > 0:
			p := reflect.New(f.Type().Elem())
			p.Elem().Set(newDefault(f.Type().Elem()))
			manyElements(p.Elem(), n, depth-1)
			f.Set(p)
		}
	}
}

// allocated is the bytes fn allocates (run alone: the test is not
// parallel).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hostileBodies are bodies of key at version built to make kmsg allocate
// the most per byte: arrays of many minimal elements, flat (20000 at the
// top) and nested (30 per array, three levels deep).
func hostileBodies(m message, version int16) [][]byte {
	var bodies [][]byte
	for _, shape := range []struct{ n, depth int }{{20000, 1}, {30, 3}} {
		fresh := reflect.New(reflect.TypeOf(m).Elem())
		fresh.Elem().Set(newDefault(reflect.TypeOf(m).Elem()))
		manyElements(fresh.Elem(), shape.n, shape.depth)
		msg := fresh.Interface().(message)
		msg.SetVersion(version)
		bodies = append(bodies, msg.AppendTo(nil))
	}
	return bodies
}

// TestDecodeMemoryBounded measures, for every request and response of every
// key and version, the memory kmsg allocates decoding hostile bodies (huge
// arrays of minimal elements, nested), and asserts that DecodedSize's bound
// covers it and that what DecodeRequest/DecodeResponse accept stays within
// MaxDecodedSize of the body.
func TestDecodeMemoryBounded(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocates a few hundred MiB over all messages; measured without -race")
	}
	var worstRaw, worstChecked float64
	var worstRawAt string
	refused := 0
	allMessages(func(key, version int16, response bool, m message) {
		for _, body := range hostileBodies(m, version) {
			if len(body) < 1024 {
				continue // no arrays: nothing to amplify
			}
			name := fmt.Sprintf("%s v%d %s (%d bytes)", APIName(key), version, kind(response), len(body))
			raw := allocated(func() { rawDecode(key, version, response, body) })
			if r := float64(raw) / float64(len(body)); r > worstRaw {
				worstRaw, worstRawAt = r, name
			}
			var err error
			checked := allocated(func() { _, err = decode(key, version, response, body) })
			if err != nil {
				if !errors.Is(err, ErrDecodeTooLarge) {
					t.Fatalf("%s: kmsg's own encoding refused: %v", name, err)
				}
				refused++
				if checked > uint64(len(body))/4+4096 {
					t.Errorf("%s: refusing allocated %d bytes", name, checked)
				}
				continue
			}
			est, _ := DecodedSize(key, version, body, response)
			if raw > uint64(est)+64<<10 {
				t.Errorf("%s: kmsg allocated %d bytes, bound said %d", name, raw, est)
			}
			if checked > uint64(MaxDecodedSize(len(body))) {
				t.Errorf("%s: decoded with %d bytes, more than MaxDecodedSize %d", name, checked, MaxDecodedSize(len(body)))
			}
			worstChecked = max(worstChecked, float64(checked-min(checked, DecodeAllowance))/float64(len(body)))
		}
	})
	t.Logf("unchecked kmsg: worst %.1f bytes allocated per body byte (%s); checked: worst %.1f per byte beyond the allowance; %d hostile bodies refused",
		worstRaw, worstRawAt, worstChecked, refused)
	if worstRaw < MaxDecodeRatio {
		t.Errorf("hostile bodies amplify only %.1fx unchecked: they do not test the bound", worstRaw)
	}
}

func decode(key, version int16, response bool, body []byte) (any, error) {
	if response {
		return DecodeResponse(key, version, body)
	}
	return DecodeRequest(key, version, body)
}

// rawDecode decodes with kmsg alone, as DecodeRequest did before its check.
func rawDecode(key, version int16, response bool, body []byte) {
	if response {
		resp := kmsg.ResponseForKey(key)
		resp.SetVersion(version)
		_ = resp.ReadFrom(body)
		return
	}
	req := kmsg.RequestForKey(key)
	req.SetVersion(version)
	_ = req.(kmsg.UnsafeReadFrom).UnsafeReadFrom(body)
}

// TestDecodeRefusesOverclaimedCount: an array claiming more elements than
// the bytes left can hold is refused before kmsg allocates for it.
func TestDecodeRefusesOverclaimedCount(t *testing.T) {
	// Produce v8: transactional id (null), acks, timeout, then the topic
	// count: 8M topics claimed, 16 MiB of zeros following.
	body := make([]byte, 16<<20)
	copy(body, []byte{0xff, 0xff, 0, 1, 0, 0, 0x75, 0x30, 0, 0x80, 0, 0})
	var err error
	n := allocated(func() { _, err = DecodeRequest(ProduceKey, 8, body) })
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("DecodeRequest: %v, want ErrMalformed", err)
	}
	if n > 1<<20 && !raceEnabled {
		t.Fatalf("refusing allocated %d bytes", n)
	}
}

// FuzzDecodedSize: for any body of any request or response kmsg knows,
// DecodedSize refuses as malformed only what kmsg itself cannot decode
// (the walk is never stricter than kmsg), and when it accepts, kmsg
// allocates no more than it said.
func FuzzDecodedSize(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	allMessages(func(key, version int16, response bool, m message) {
		if version == MaxVersion(key) || version == 0 {
			fresh := reflect.New(reflect.TypeOf(m).Elem())
			fillRandom(r, fresh.Elem(), 3)
			msg := fresh.Interface().(message)
			msg.SetVersion(version)
			f.Add(uint16(key), version, response, msg.AppendTo(nil))
		}
	})
	f.Fuzz(func(t *testing.T, k uint16, version int16, response bool, body []byte) {
		if raceEnabled {
			t.Skip("allocation is measured without -race")
		}
		key := int16(k % uint16(MaxKnownKey()+1))
		if !KnownAPI(key) {
			return
		}
		version = int16(uint16(version) % uint16(MaxVersion(key)+1))
		est, err := DecodedSize(key, version, body, response)
		var rawErr error
		raw := allocated(func() { rawErr = rawDecodeErr(key, version, response, body) })
		switch {
		case err == nil && raw > uint64(est)+64<<10: // beyond the message itself and its fixed parts
			t.Fatalf("%s v%d %s: kmsg allocated %d, bound %d", APIName(key), version, kind(response), raw, est)
		case err != nil && !errors.Is(err, ErrDecodeTooLarge) && rawErr == nil:
			t.Fatalf("%s v%d %s: walk refused what kmsg decodes: %v", APIName(key), version, kind(response), err)
		}
	})
}

func rawDecodeErr(key, version int16, response bool, body []byte) error {
	if response {
		resp := kmsg.ResponseForKey(key)
		resp.SetVersion(version)
		return resp.ReadFrom(body)
	}
	req := kmsg.RequestForKey(key)
	req.SetVersion(version)
	return req.(kmsg.UnsafeReadFrom).UnsafeReadFrom(body)
}
