package filter

// KeyDoc documents one key of kproxy's configuration file for users: the
// reference (docs/configuration.md), `kproxy config schema` and `kproxy
// config defaults` are generated from these rows, and a test fails on a
// key without one. A feature's package declares the rows of its section.
type KeyDoc struct {
	// Key is the dotted path as users write it. A list of sections is
	// written name[], and its entries' keys name[].key.
	Key string
	// Default is the value when the key is left out, as users would
	// write it; a test compares it with what the code's defaulting sets.
	// Empty: the code sets nothing (see DefaultNote).
	Default string
	// DefaultNote says in words what Default cannot: a default taken
	// from another key, or that the key is required.
	DefaultNote string
	// Values, when set, are the only values the key (or each item of
	// a list) takes, spelled exactly.
	Values []string
	// Meaning is what the key does, in Markdown.
	Meaning string
}
