package policy

import (
	"slices"
	"testing"
)

// TestDiffListsAccessGainedAndLost: a narrowed pattern loses access, a
// new rule gains it, and governance and quota changes are named.
func TestDiffListsAccessGainedAndLost(t *testing.T) {
	before := parsePolicy(t, `policy:
  rules:
    - {name: alice, principals: ["User:alice"], allow: [describe], groups: ["g1"]}
    - {name: bob, principals: ["User:bob"], allow: [read], topics: ["orders"]}
  governance:
    - {name: acks, produce: {required_acks: all}}
`).Policy
	after := parsePolicy(t, `policy:
  rules:
    - {name: bob, principals: ["User:bob"], allow: [read, write], topics: ["orders"]}
  quotas:
    - {name: slow, principals: ["*"], produce_bytes_per_second: 100}
`).Policy
	d, err := Diff(before, after, "b")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"- User:alice  DESCRIBE  group g1",
		"+ User:bob  WRITE  topic orders",
		"~ governance: removed acks",
		"~ quotas: added slow",
	}
	if got := d.Lines(); !slices.Equal(got, want) {
		t.Errorf("diff lines:\n%q\nwant\n%q", got, want)
	}
	if g, l := d.Counts(); g != 1 || l != 1 {
		t.Errorf("counts: %d gained, %d lost; want 1, 1", g, l)
	}
	same, err := Diff(after, after, "")
	if err != nil || !same.Empty() {
		t.Errorf("a policy against itself: %v, %v; want no change", same.Lines(), err)
	}
}

// TestDiffOtherPrincipal: a rule for everyone changes what "*" (anyone a
// rule does not name) may do, and the default's change shows.
func TestDiffOtherPrincipal(t *testing.T) {
	before := parsePolicy(t, "policy:\n  rules:\n    - {name: a, principals: [\"User:alice\"], allow: [read], topics: [\"t\"]}\n").Policy
	after := parsePolicy(t, "policy:\n  rules:\n    - {name: a, principals: [\"*\"], allow: [read], topics: [\"t\"]}\n").Policy
	d, err := Diff(before, after, "b")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"+ *  READ  topic t", "+ *  DESCRIBE  topic t"} // in Kafka's operation order
	if got := d.Lines(); !slices.Equal(got, want) {
		t.Errorf("diff lines:\n%q\nwant\n%q", got, want)
	}
}

// TestDiffAsksAsTheVirtualCluster: in a virtual cluster's diff every
// principal's connection is that cluster's, so a rule for the whole
// cluster changes what everyone there may do.
func TestDiffAsksAsTheVirtualCluster(t *testing.T) {
	before := parsePolicy(t, "policy:\n  rules:\n    - {name: a, principals: [\"VirtualCluster:b\"], allow: [read], topics: [\"t\"]}\n").Policy
	after := parsePolicy(t, "policy: {default: deny}\n").Policy
	d, err := Diff(before, after, "b")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"- VirtualCluster:b  READ  topic t", "- VirtualCluster:b  DESCRIBE  topic t", "- *  READ  topic t", "- *  DESCRIBE  topic t"} // "*" last
	if got := d.Lines(); !slices.Equal(got, want) {
		t.Errorf("diff lines:\n%q\nwant\n%q", got, want)
	}
}
