package policyconfig

import (
	"fmt"
	"strings"

	"github.com/kproxy/kproxy/internal/acl"
)

// Warnings lists what is valid in the policy but likely not what the
// operator meant, each naming its key: grants to principals a client
// chooses. A client_id: principal is whatever client id the client puts
// in each request's header, so on listeners without authentication
// (authenticated false: no SASL, no required client certificate) a rule
// granting it more than describe grants that to anyone who can connect.
// A deny or governance entry that only client_id: principals select is
// escaped, on any listener, by sending another client id.
func (p *Policy) Warnings(authenticated bool) []string {
	if p == nil {
		return nil
	}
	var out []string
	for i, r := range p.Rules {
		ids := clientIDPrincipals(r.Principals)
		if len(ids) == 0 {
			continue
		}
		key := fmt.Sprintf("policy.rules[%d]", i)
		if !authenticated {
			var granted []string
			for _, s := range r.Allow {
				if op, ok := acl.ParseOperation(s); ok && op != acl.Describe {
					granted = append(granted, op.ConfigName())
				}
			}
			if len(granted) > 0 {
				out = append(out, fmt.Sprintf("%s: rule %q grants %s to %s, which any client can claim: listeners have no authentication (no listeners.sasl, no listeners.tls.client_auth: require); grant it to User: or cn: principals, or grant client_id: principals only describe",
					key, r.Name, strings.Join(granted, ", "), strings.Join(ids, ", ")))
			}
		}
		if len(r.Deny) > 0 && len(ids) == len(r.Principals) {
			out = append(out, fmt.Sprintf("%s: rule %q denies only by client id (%s): a client escapes it by sending another client id",
				key, r.Name, strings.Join(ids, ", ")))
		}
	}
	for i, g := range p.Governance {
		if ids := clientIDPrincipals(g.Principals); len(ids) > 0 && len(ids) == len(g.Principals) {
			out = append(out, fmt.Sprintf("policy.governance[%d]: governance %q applies only by client id (%s): a client escapes it by sending another client id",
				i, g.Name, strings.Join(ids, ", ")))
		}
	}
	return out
}

func clientIDPrincipals(list []string) []string {
	var ids []string
	for _, s := range list {
		if pm, err := ParsePrincipal(s); err == nil && pm.Kind == PrincipalClientID {
			ids = append(ids, s)
		}
	}
	return ids
}
