package wire

// The functions below answer from the built-in table, APIs(); the header
// parser consults them for every frame.

// KnownAPI reports whether kmsg can encode and decode API key.
func KnownAPI(key int16) bool { return APIs().KnownAPI(key) }

// MaxKnownKey is the highest API key kmsg has a message for.
func MaxKnownKey() int16 { return APIs().MaxKey() }

// MaxVersion is the highest version of key that kmsg can decode, or -1.
func MaxVersion(key int16) int16 { return APIs().MaxVersion(key) }

// SupportedVersion reports whether kproxy can decode version of key.
func SupportedVersion(key, version int16) bool {
	return version >= 0 && version <= MaxVersion(key)
}

// IsFlexible reports whether version of key uses flexible (KIP-482) encoding
// and therefore the v2 request / v1 response header (see
// APITable.IsFlexible).
func IsFlexible(key, version int16) bool { return APIs().IsFlexible(key, version) }
