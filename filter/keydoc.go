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

// KeysUnder returns rows with each Key made a key of the section at
// prefix: a Key relative to the section, "" for the section itself. A
// section's rows are written relative to it, so that each row names only
// its own key.
func KeysUnder(prefix string, rows []KeyDoc) []KeyDoc {
	out := make([]KeyDoc, len(rows))
	for i, d := range rows {
		if d.Key == "" {
			d.Key = prefix
		} else {
			d.Key = prefix + "." + d.Key
		}
		out[i] = d
	}
	return out
}
