package main

import (
	"os"
	"testing"
)

const policyDoc = "../../../docs/policy.md"

// checkSection fails t when docs/policy.md's section name is not what the
// policy package renders now.
func checkSection(t *testing.T, name string) {
	t.Helper()
	doc, err := os.ReadFile(policyDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sections() {
		if s.name != name {
			continue
		}
		i, j, err := s.find(doc)
		if err != nil {
			t.Fatalf("%s %v", policyDoc, err)
		}
		if string(doc[i:j]) != s.render() {
			t.Errorf("%s is stale: run go generate ./policy", policyDoc)
		}
		return
	}
	t.Fatalf("no section %q", name)
}

// TestDocTableIsCurrent fails when docs/policy.md's operation table is not
// the one the code enforces.
func TestDocTableIsCurrent(t *testing.T) { checkSection(t, "OPERATION TABLE") }

// TestRuleOperationsDocIsCurrent fails when docs/policy.md's list of rule
// operations is not package acl's.
func TestRuleOperationsDocIsCurrent(t *testing.T) { checkSection(t, "RULE OPERATIONS") }

// TestRevealTableIsCurrent fails when docs/policy.md does not list every
// response field kmsg knows that can name a topic, group or transactional
// id (or carries authorized operations, cursors, messages), with how each
// API's are handled. A kmsg upgrade that adds such a field fails here
// until the list, and the handling, are reviewed.
func TestRevealTableIsCurrent(t *testing.T) { checkSection(t, "REVEAL TABLE") }
