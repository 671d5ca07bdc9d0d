package wire

// FirstTopic returns the first topic a Produce or Fetch request names,
// read from bodyPrefix (the start of its body, the bytes after the request
// header, as much as is at hand) without decoding it: its name up to
// version 12, its topic id from 13 on. Both are zero for other keys and
// when bodyPrefix ends before the topic. name aliases bodyPrefix.
func FirstTopic(key, version int16, bodyPrefix []byte) (name string, id [16]byte) {
	flexible := IsFlexible(key, version)
	r := summaryReader{src: bodyPrefix}
	switch key {
	case ProduceKey:
		if version >= 3 {
			r.nullableString(flexible) // transactional_id
		}
		r.int16() // acks
		r.int32() // timeout_ms
	case FetchKey:
		if version < 15 {
			r.int32() // replica_id (a tagged field from v15)
		}
		r.int32() // max_wait_ms
		r.int32() // min_bytes
		if version >= 3 {
			r.int32() // max_bytes
		}
		if version >= 4 {
			r.span(1) // isolation_level
		}
		if version >= 7 {
			r.int32() // session_id
			r.int32() // session_epoch
		}
	default:
		return "", id
	}
	if n := r.arrayLen(flexible); n <= 0 {
		return "", id
	}
	if version >= 13 {
		sp := r.span(16)
		if !r.bad {
			copy(id[:], bodyPrefix[sp.off:sp.off+16])
		}
		return "", id
	}
	sp := r.string(flexible)
	if r.bad {
		return "", id
	}
	return unsafeString(bodyPrefix, sp), id
}
