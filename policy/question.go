package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/kproxy/kproxy/internal/acl"
)

// QuestionSpec is a Question as the explain command's flags and the admin
// endpoint's query parameters spell it.
type QuestionSpec struct {
	Principal       string // User:NAME
	Operation       string // as a rule writes it: write, describe_configs
	Topic           string
	Group           string
	TransactionalID string
	Cluster         bool
	ClientID        string
	Host            string // the client's IP address
	Listener        string
	CN              string
	Claims          []string // NAME=VALUE
	VirtualCluster  string
}

// Question checks s and builds its Question; the error says which part
// is wrong and what would be valid.
func (s QuestionSpec) Question() (Question, error) {
	var q Question
	var errs []error
	user, ok := strings.CutPrefix(s.Principal, "User:")
	if !ok || user == "" {
		errs = append(errs, fmt.Errorf("principal %q: write User:NAME (User:%s for a client that did not authenticate)", s.Principal, Anonymous))
	}
	q.Principal = Principal{User: user, ClientID: s.ClientID, Listener: s.Listener, CN: s.CN, VirtualCluster: s.VirtualCluster}
	if s.Host != "" {
		addr, err := netip.ParseAddr(s.Host)
		if err != nil {
			errs = append(errs, fmt.Errorf("host %q: not an IP address", s.Host))
		}
		q.Principal.Addr = addr.Unmap()
	}
	for _, c := range s.Claims {
		name, value, ok := strings.Cut(c, "=")
		if !ok || name == "" {
			errs = append(errs, fmt.Errorf("claim %q: write NAME=VALUE", c))
			continue
		}
		if q.Principal.Claims == nil {
			q.Principal.Claims = map[string][]string{}
		}
		q.Principal.Claims[name] = append(q.Principal.Claims[name], value)
	}
	op, ok := acl.ParseOperation(s.Operation)
	if !ok || op == acl.All {
		errs = append(errs, fmt.Errorf("operation %q: valid: %s", s.Operation, strings.Join(questionOperations(), ", ")))
	}
	q.Operation = op
	var named []string
	for _, r := range []struct {
		key  string
		rt   ResourceType
		name string
		set  bool
	}{
		{"topic", ResTopic, s.Topic, s.Topic != ""},
		{"group", ResGroup, s.Group, s.Group != ""},
		{"transactional-id", ResTransactionalID, s.TransactionalID, s.TransactionalID != ""},
		{"cluster", ResCluster, ClusterName, s.Cluster},
	} {
		if r.set {
			named = append(named, r.key)
			q.Resource, q.Name = r.rt, r.name
		}
	}
	if len(named) != 1 {
		errs = append(errs, fmt.Errorf("resource: name exactly one of topic, group, transactional-id or cluster (got %d: %s)", len(named), strings.Join(named, ", ")))
	} else if ok && op != acl.All && !opAppliesTo(op, q.Resource) {
		errs = append(errs, fmt.Errorf("operation %s does not apply to a %s; it applies to %s", op.ConfigName(), named[0], appliesText(op)))
	}
	return q, errors.Join(errs...)
}

func questionOperations() []string {
	var out []string
	for _, op := range acl.Operations() {
		if op != acl.All {
			out = append(out, op.ConfigName())
		}
	}
	return out
}

func opAppliesTo(op Operation, rt ResourceType) bool {
	for _, a := range op.AppliesTo() {
		if a == rt {
			return true
		}
	}
	return false
}

func appliesText(op Operation) string {
	var out []string
	for _, rt := range op.AppliesTo() {
		out = append(out, resourceText(rt))
	}
	return strings.Join(out, ", ")
}
