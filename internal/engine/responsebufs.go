package engine

// largeResponseBufs are the buffers a pair's response loop reads a large
// response into and encodes it in, borrowed from the server's pool of
// response frames for the one response and given back once it is
// written. (Not the request frames' pool: a request a response hook
// holds keeps its buffer, and would take a large one with it.) A consumer's
// fetches are often over keepDecodeBuf, which a pair keeps for itself: a
// buffer of its own per response would be allocated, zeroed and collected
// every time; one kept would pin megabytes per idle connection.
type largeResponseBufs struct {
	read, encode *[]byte
}

// frame is a buffer of n bytes for a response frame.
func (l *largeResponseBufs) frame(fp *framePool, n int) []byte {
	l.read = borrow(fp, l.read, n)
	return (*l.read)[:n]
}

// encoding is an empty buffer with room for an encoding of about n bytes.
func (l *largeResponseBufs) encoding(fp *framePool, n int) []byte {
	l.encode = borrow(fp, l.encode, n)
	return (*l.encode)[:0]
}

// release gives the buffers back to fp.
func (l *largeResponseBufs) release(fp *framePool) {
	fp.put(l.read)
	fp.put(l.encode)
	*l = largeResponseBufs{}
}

// borrow is a pooled buffer with room for n bytes: held, if it does.
func borrow(fp *framePool, held *[]byte, n int) *[]byte {
	if held != nil && cap(*held) >= n {
		return held
	}
	fp.put(held)
	b := fp.get(n)
	if cap(*b) < n {
		*b = make([]byte, 0, frameRoom(n))
	}
	return b
}
