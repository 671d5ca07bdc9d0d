package policy

import (
	"slices"

	"github.com/kproxy/kproxy/internal/acl"
)

// APIClass is how the policy treats one API key, for a principal without
// the permissions the key needs.
type APIClass int

const (
	// ClassSetup: ApiVersions and the SASL exchange, always allowed
	// because a client needs them to connect at all.
	ClassSetup APIClass = iota + 1
	// ClassUnchecked: Kafka checks no ACL for it, and neither does kproxy.
	ClassUnchecked
	// ClassDenied: a denial is answered in the response's shape, with the
	// denied resource type's *_AUTHORIZATION_FAILED code (or, for a topic
	// the principal may not describe, the code Kafka hides it behind).
	ClassDenied
	// ClassListing: a listing; what the principal may not describe is left
	// out of the answer.
	ClassListing
	// ClassClosed: a denial closes the connection, because the response
	// has no field for an error.
	ClassClosed
)

func (c APIClass) String() string {
	switch c {
	case ClassSetup:
		return "setup"
	case ClassUnchecked:
		return "unchecked"
	case ClassDenied:
		return "denied with an error code"
	case ClassListing:
		return "listing: hidden"
	case ClassClosed:
		return "connection closed"
	}
	return "unclassified"
}

// APIRule is one API key's row of the operation table as other packages
// may see it: its class, the resource types whose permissions it needs,
// each need, and how a denial is answered.
type APIRule struct {
	Key       int16
	Class     APIClass
	Resources []acl.ResourceType
	Needs     []Need
	// Answer says, in words, how a denial is answered.
	Answer string
}

// Need is one operation on a resource type an API asks for, and When (in
// words; "" for always).
type Need struct {
	Operation Operation
	Resource  ResourceType
	When      string
}

// APIRules returns the operation table's rows, one per API key kmsg knows,
// in the table's order: the table the enforcer uses, for the adversarial
// suites' assertions and the generated docs/policy.md instead of a copy.
func APIRules() []APIRule {
	var rules []APIRule
	for _, e := range operationTable() {
		r := APIRule{Key: int16(e.key), Class: e.class(), Answer: e.answer}
		for _, n := range e.needs {
			r.Needs = append(r.Needs, Need{Operation: n.op, Resource: n.res, When: n.when})
			if !slices.Contains(r.Resources, n.res) {
				r.Resources = append(r.Resources, n.res)
			}
		}
		rules = append(rules, r)
	}
	return rules
}

func (a *apiEntry) class() APIClass {
	switch {
	case a.setup:
		return ClassSetup
	case len(a.needs) == 0:
		return ClassUnchecked
	case a.answer == answerClosed:
		return ClassClosed
	case a.listing:
		return ClassListing
	}
	return ClassDenied
}
