package records

// crc32cCombine returns the CRC-32C of A followed by B from crcA, the
// CRC-32C of A, crcB, that of B, and lenB, B's length: a batch whose
// record value is streamed gets its checksum without the value's bytes
// ever being in memory. It is zlib's crc32_combine for the Castagnoli
// polynomial: appending lenB zero bytes multiplies crcA by x^(8*lenB)
// modulo the polynomial, and the CRC is linear in its input.
func crc32cCombine(crcA, crcB uint32, lenB int64) uint32 {
	return multModP(xPow8n(lenB), crcA) ^ crcB
}

// castagnoliReversed is the Castagnoli polynomial in the bit order of the
// reflected CRC hash/crc32 computes (crc32.Castagnoli).
const castagnoliReversed = 0x82f63b78

// multModP multiplies a and b modulo the polynomial, both in the
// reflected representation (bit 31 is x^0).
func multModP(a, b uint32) uint32 {
	m := uint32(1) << 31
	var p uint32
	for {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				return p
			}
		}
		m >>= 1
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReversed
		} else {
			b >>= 1
		}
	}
}

// xPow8n is x^(8n) modulo the polynomial, by squaring: n bytes' shift.
func xPow8n(n int64) uint32 {
	p := uint32(1) << 31  // x^0
	sq := uint32(1) << 23 // x^8
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			p = multModP(sq, p)
		}
		sq = multModP(sq, sq)
	}
	return p
}
