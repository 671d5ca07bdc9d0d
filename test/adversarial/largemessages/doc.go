// Package largemessages holds the attacks on large message offload,
// through the real kproxy binary with SeaweedFS as the object store in
// front of kfake: a tenant writing a pointer record that names another
// tenant's object, another bucket, or a path escaping its own prefix, to
// have kproxy fetch it; a pointer claiming a huge size; a pointer whose
// SHA-256 is not its object's; many consumers of large values at once, to
// make kproxy hold them beyond limits.max_buffered_bytes or stall another
// client.
package largemessages
