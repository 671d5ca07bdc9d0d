package config

import (
	"slices"
	"testing"
)

// TestReferenceCoversEveryKey: every key the Config type lets users
// write has its row in Reference (keys of a shared section under the
// section it repeats), and every row names such a key, once.
func TestReferenceCoversEveryKey(t *testing.T) {
	documented := map[string]bool{}
	for _, d := range Reference() {
		if documented[d.Key] {
			t.Errorf("Reference: %q has two rows", d.Key)
		}
		documented[d.Key] = true
		if d.Meaning == "" {
			t.Errorf("Reference: %q has no meaning", d.Key)
		}
	}
	written := map[string]bool{}
	for _, k := range fileKeys() {
		canonical := CanonicalKey(k.Path)
		if !documented[canonical] && !written[canonical] {
			t.Errorf("key %s (field %s) has no row %q in Reference (internal/config/reference_table.go, or the section's own package: policy/policyconfig/reference.go)", k.Path, k.Field.Name, canonical)
		}
		written[canonical] = true
	}
	for _, d := range Reference() {
		if !written[d.Key] {
			t.Errorf("Reference row %q names no key of the Config type", d.Key)
		}
	}
	for _, s := range SharedSections() {
		if !written[s.At] || !documented[s.At] {
			t.Errorf("shared section %s: not a documented key of the file", s.At)
		}
	}
}

// TestReferenceDefaultsAreTheCodes: a row's Default is what kproxy runs
// with when the key is left out, and a key the code defaults to something
// says so, in Default or, for a default taken from another key, in
// DefaultNote.
func TestReferenceDefaultsAreTheCodes(t *testing.T) {
	for _, kv := range keyValues(defaultedConfig()) {
		if CanonicalKey(kv.Path) != kv.Path {
			continue
		}
		d, ok := LookupKey(kv.Path)
		if !ok {
			continue // TestReferenceCoversEveryKey reports it
		}
		if _, _, section := sectionType(kv.Field.Type); section && !slices.Contains([]string{"[]", ""}, d.Default) {
			t.Errorf("%s: a section's default is written %q; want [] for a list of sections, else nothing", kv.Path, d.Default)
			continue
		} else if section {
			continue
		}
		got := formatValue(kv.Value)
		switch {
		case d.Default != "" && d.Default != got:
			t.Errorf("%s: Reference says default %s, the code sets %s", kv.Path, d.Default, got)
		case d.Default == "" && !isZeroDefault(got) && d.DefaultNote == "":
			t.Errorf("%s: the code defaults it to %s, which its row does not say", kv.Path, got)
		}
	}
}

// isZeroDefault reports whether a formatted value is what a key left out
// holds when nothing sets it.
func isZeroDefault(s string) bool {
	return slices.Contains([]string{"", `""`, "0", "0s", "false", "[]"}, s)
}
