package envelope

import (
	"encoding/binary"
	"sync"
)

// appendAAD appends the authenticated data of one sealed part: the part,
// the topic, the header name (empty for the value) and the whole marker
// header value. Lengths are explicit and the marker is last and
// self-delimiting, so two different contexts never give the same bytes:
// ciphertext moved to another topic, header or part, or paired with an
// edited marker (version, parts, KEK id, wrapped DEK), fails to open.
func appendAAD(dst []byte, part Parts, topic string, headerName []byte, marker []byte) []byte {
	dst = append(dst, byte(part))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(topic)))
	dst = append(dst, topic...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(headerName)))
	dst = append(dst, headerName...)
	return append(dst, marker...)
}

// aadBuffers reuses AAD scratch space across calls and goroutines: the
// AEAD interface call makes a stack buffer escape, so without reuse every
// part would allocate its AAD.
type aadBuffers struct{ pool sync.Pool }

func (p *aadBuffers) get() *[]byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 512)
	return &b
}

// maxPooledAAD: a buffer grown past this (a huge header name) is left to
// the garbage collector rather than kept.
const maxPooledAAD = 64 << 10

func (p *aadBuffers) put(b *[]byte) {
	if cap(*b) > maxPooledAAD {
		return
	}
	*b = (*b)[:0]
	p.pool.Put(b)
}
