package protocol

// FirstTopic returns the name of the first topic a Produce or Fetch
// request names, read from bodyPrefix (the start of its body, the bytes
// after the request header, as much as is at hand) without decoding it.
// It is "" for other keys, for versions that name topics by id (13+), and
// when bodyPrefix ends before the name. The result aliases bodyPrefix.
func FirstTopic(key, version int16, bodyPrefix []byte) string {
	if version >= 13 {
		return ""
	}
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
		r.int32() // replica_id (v0-14: in the body)
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
		return ""
	}
	if n := r.arrayLen(flexible); n <= 0 {
		return ""
	}
	name := r.string(flexible)
	if r.bad {
		return ""
	}
	return unsafeString(bodyPrefix, name)
}
