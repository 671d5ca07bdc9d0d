// Package pointer encodes and decodes the pointer record that replaces an
// offloaded value: KafScale's LFS envelope, a small JSON object naming the
// object store bucket and key, the value's size and SHA-256, and a copy of
// a few of the record's headers. kproxy writes pointers KafScale's
// resolvers accept and resolves pointers KafScale's proxy wrote, so every
// field name, encoding and the detection rule follow KafScale's own code
// (see docs/large-messages.md, "Pointer format").
package pointer
