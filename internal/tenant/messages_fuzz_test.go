package tenant

import (
	"strings"
	"testing"
)

// FuzzDownMessage: any message maps without panicking; one holding none
// of the tenant's prefixes comes back unchanged with no name-like word in
// it, or withheld; the tenant's names come back unprefixed.
func FuzzDownMessage(f *testing.F) {
	for _, s := range []string{
		"Topic 'acme_x.orders' collides with existing topic: acme_x_orders",
		"Topic 'acme_x.orders.v1' already exists.",
		"Replication factor: 3 larger than available brokers: 1.",
		"Unknown topic __consumer_offsets",
		"Group acme_x.g1 is not empty.",
		"", ".", "_", "acme_x.", "a.b", "x acme_x.", "\xff acme_x.\x00y_",
	} {
		f.Add(s)
	}
	m := New(Names{Topic: "acme_x.", Group: "acme_x.", TransactionalID: "acme_x.tx."})
	f.Fuzz(func(t *testing.T, in string) {
		out := m.downMessage(in)
		if out == msgWithheld {
			return
		}
		if !strings.Contains(in, "acme_x.") {
			if out != in {
				t.Fatalf("%q without the tenant's prefix became %q", in, out)
			}
			for _, w := range strings.FieldsFunc(out, func(r rune) bool { return r > 0x7f || !isNameChar(byte(r)) }) {
				if looksLikeName(w) {
					t.Fatalf("%q passed with name-like word %q", in, w)
				}
			}
		}
		if len(out) > len(in) {
			t.Fatalf("%q grew to %q", in, out)
		}
	})
}
