package tenant

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ACLs in a virtual cluster. A tenant's ACLs are ACLs on its own resources:
// topics, groups and transactional ids, whose names are prefixed like the
// resources themselves. The tenant's LITERAL "*" (all its topics, say) is
// stored upstream as PREFIXED on the bare prefix, and shown back as LITERAL
// "*"; the upstream's own LITERAL "*" is the whole cluster's and never the
// tenant's. Principals are not prefixed: an ACL names who may use the
// tenant's resource.
//
// Cluster, delegation-token and user ACLs apply to the whole upstream
// cluster, to every tenant: creating one is refused
// (CLUSTER_AUTHORIZATION_FAILED), describing lists none, and a delete
// filter naming one is refused. Filters that cannot be confined to the
// tenant's resources in one upstream filter are refused rather than
// widened: a DeleteAcls filter deletes upstream, and one without a
// resource name, with resource type ANY, or pattern MATCH (which matches
// the cluster-wide LITERAL "*" and every shorter PREFIXED pattern) would
// delete other tenants' and the operator's ACLs. A request with a refused
// entry is answered by kproxy as a whole: every entry gets an error, the
// others saying they were not run.
//
// DescribeAcls is read-only: its filter goes upstream mapped, and the
// answer keeps only the tenant's ACLs, so MATCH works there. A LITERAL
// filter without a name is sent as ANY (so that the tenant's LITERAL "*"
// is listed) and then lists the tenant's PREFIXED ACLs too.

func aclAPIs() []api {
	return []api{
		typedEntry(kmsg.DescribeACLs.Int16(), upDescribeACLs, downDescribeACLs,
			"req.ResourceName", "resp.Resources.ResourceName"),
		typedEntry(kmsg.CreateACLs.Int16(), upCreateACLs, downCreateACLs,
			"req.Creations.ResourceName"),
		typedEntry(kmsg.DeleteACLs.Int16(), upDeleteACLs, downDeleteACLs,
			"req.Filters.ResourceName", "resp.Results.MatchingACLs.ResourceName"),
	}
}

const aclWildcard = "*"

var (
	msgClusterACL   = "kproxy: %s ACLs apply to the whole cluster and are not available in a virtual cluster"
	msgNotConfined  = "kproxy: in a virtual cluster a DeleteAcls filter names one resource type (TOPIC, GROUP or TRANSACTIONAL_ID), a resource name, and pattern LITERAL, PREFIXED or ANY (not ANY \"*\")"
	msgNotRun       = "kproxy: not run: another entry of this request was refused"
	msgBadPattern   = "kproxy: an ACL's pattern type is LITERAL or PREFIXED"
	msgNeedsVersion = "kproxy: a LITERAL \"*\" ACL of a virtual cluster needs pattern types (ACL request v1+)"
	// msgEmptyName is Kafka's own refusal (AclControlManager): an empty
	// name would go upstream without the tenant's prefix, where a
	// PREFIXED "" pattern matches every tenant's resources.
	msgEmptyName = "Resource name should not be empty"
)

// aclPrefix is the prefix of the tenant's resources of type rt; false for
// the types that are the whole cluster's.
func (m *Mapper) aclPrefix(rt kmsg.ACLResourceType) (string, bool) {
	switch rt {
	case kmsg.ACLResourceTypeTopic:
		return m.names.Topic, true
	case kmsg.ACLResourceTypeGroup:
		return m.names.Group, true
	case kmsg.ACLResourceTypeTransactionalId:
		return m.names.TransactionalID, true
	}
	return "", false
}

// upACLPattern is the upstream pattern of the tenant's concrete pattern
// (name, pt) under prefix. The empty name stays empty (the upstream
// rejects it as it would without a prefix).
func upACLPattern(prefix, name string, pt kmsg.ACLResourcePatternType) (string, kmsg.ACLResourcePatternType) {
	if prefix == "" || name == "" {
		return name, pt
	}
	if pt == kmsg.ACLResourcePatternTypeLiteral && name == aclWildcard {
		return prefix, kmsg.ACLResourcePatternTypePrefixed
	}
	return prefix + name, pt
}

// downACLPattern is the tenant's pattern of an upstream pattern; false:
// not the tenant's. wildcard false hides the tenant's LITERAL "*" (for a
// filter that asked for PREFIXED patterns only).
func downACLPattern(prefix, name string, pt kmsg.ACLResourcePatternType, wildcard bool) (string, kmsg.ACLResourcePatternType, bool) {
	if prefix == "" {
		return name, pt, true
	}
	switch pt {
	case kmsg.ACLResourcePatternTypePrefixed:
		if name == prefix {
			return aclWildcard, kmsg.ACLResourcePatternTypeLiteral, wildcard
		}
	case kmsg.ACLResourcePatternTypeLiteral:
	default:
		return "", pt, false
	}
	d, ok := cutPrefix(prefix, name)
	return d, pt, ok
}

// downACL maps an upstream ACL's resource pattern to the tenant's in
// place; false: it is not the tenant's (hide it).
func (m *Mapper) downACL(rt kmsg.ACLResourceType, name *string, pt *kmsg.ACLResourcePatternType, wildcard bool) bool {
	prefix, ok := m.aclPrefix(rt)
	if !ok {
		return false
	}
	*name, *pt, ok = downACLPattern(prefix, *name, *pt, wildcard)
	return ok
}

// aclFilterPrefix is the prefix a filter's name is mapped with. Resource
// type ANY with a name is served only when every kind has the same prefix.
func (m *Mapper) aclFilterPrefix(rt kmsg.ACLResourceType) (string, bool) {
	if rt != kmsg.ACLResourceTypeAny {
		return m.aclPrefix(rt)
	}
	n := m.names
	return n.Topic, n.Topic == n.Group && n.Group == n.TransactionalID
}

func upDescribeACLs(_ context.Context, m *Mapper, r *kmsg.DescribeACLsRequest) error {
	answer := func(code int16, msg string) error {
		resp := r.ResponseKind().(*kmsg.DescribeACLsResponse)
		resp.Version = r.Version
		if code != 0 {
			resp.ErrorCode, resp.ErrorMessage = code, kmsg.StringPtr(msg)
		}
		return &Answer{Response: resp}
	}
	if r.ResourceName == nil {
		switch r.ResourceType {
		case kmsg.ACLResourceTypeCluster, kmsg.ACLResourceTypeDelegationToken, kmsg.ACLResourceTypeUser:
			return answer(0, "")
		}
		if r.ResourcePatternType == kmsg.ACLResourcePatternTypeLiteral && r.Version >= 1 {
			r.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
		}
		return nil
	}
	prefix, ok := m.aclFilterPrefix(r.ResourceType)
	if !ok {
		if r.ResourceType == kmsg.ACLResourceTypeAny {
			return answer(kerr.InvalidRequest.Code, "kproxy: this virtual cluster's prefixes differ by resource type: describe ACLs by name with one resource type")
		}
		return answer(0, "")
	}
	name := *r.ResourceName
	switch r.ResourcePatternType {
	case kmsg.ACLResourcePatternTypeAny:
		if name == aclWildcard && prefix != "" {
			return answer(kerr.InvalidRequest.Code, "kproxy: in a virtual cluster describe LITERAL \"*\" and PREFIXED \"*\" ACLs separately")
		}
		name = addPrefix(prefix, name)
	case kmsg.ACLResourcePatternTypeMatch:
		name = addPrefix(prefix, name)
	default:
		up, pt := upACLPattern(prefix, name, r.ResourcePatternType)
		if pt != r.ResourcePatternType && r.Version == 0 {
			return answer(kerr.InvalidRequest.Code, msgNeedsVersion)
		}
		name, r.ResourcePatternType = up, pt
	}
	r.ResourceName = &name
	return nil
}

func downDescribeACLs(m *Mapper, r *kmsg.DescribeACLsRequest, resp *kmsg.DescribeACLsResponse) error {
	wildcard := r == nil || r.ResourcePatternType != kmsg.ACLResourcePatternTypePrefixed || r.ResourceName != nil
	kept := resp.Resources[:0]
	for _, res := range resp.Resources {
		if m.downACL(res.ResourceType, &res.ResourceName, &res.ResourcePatternType, wildcard) {
			kept = append(kept, res)
		}
	}
	clear(resp.Resources[len(kept):])
	resp.Resources = kept
	m.DownMessage(resp.ErrorMessage)
	return nil
}

// upCreateACLs maps every creation; a creation of a cluster-wide ACL, of
// a pattern type no ACL has or with an empty resource name refuses the
// request.
func upCreateACLs(_ context.Context, m *Mapper, r *kmsg.CreateACLsRequest) error {
	rf := newEntryRefusals(len(r.Creations))
	for i := range r.Creations {
		c := &r.Creations[i]
		prefix, ok := m.aclPrefix(c.ResourceType)
		switch {
		case !ok:
			rf.refuse(i, kerr.ClusterAuthorizationFailed, fmt.Sprintf(msgClusterACL, aclTypeName(c.ResourceType)))
		case c.ResourcePatternType != kmsg.ACLResourcePatternTypeLiteral && c.ResourcePatternType != kmsg.ACLResourcePatternTypePrefixed:
			rf.refuse(i, kerr.InvalidRequest, msgBadPattern)
		case c.ResourceName == "":
			rf.refuse(i, kerr.InvalidRequest, msgEmptyName)
		default:
			name, pt := upACLPattern(prefix, c.ResourceName, c.ResourcePatternType)
			if pt != c.ResourcePatternType && r.Version == 0 {
				rf.refuse(i, kerr.InvalidRequest, msgNeedsVersion)
				break
			}
			c.ResourceName, c.ResourcePatternType = name, pt
		}
	}
	return answerRefused(rf, r, func(resp *kmsg.CreateACLsResponse, code int16, msg *string) {
		res := kmsg.NewCreateACLsResponseResult()
		res.ErrorCode, res.ErrorMessage = code, msg
		resp.Results = append(resp.Results, res)
	})
}

// downCreateACLs maps the results' messages (the upstream's may echo
// names).
func downCreateACLs(m *Mapper, _ *kmsg.CreateACLsRequest, resp *kmsg.CreateACLsResponse) error {
	for i := range resp.Results {
		m.DownMessage(resp.Results[i].ErrorMessage)
	}
	return nil
}

// upDeleteACLs maps every filter that can be confined to the tenant's
// resources; any other refuses the request (see the package comment of
// this file).
func upDeleteACLs(_ context.Context, m *Mapper, r *kmsg.DeleteACLsRequest) error {
	rf := newEntryRefusals(len(r.Filters))
	for i := range r.Filters {
		f := &r.Filters[i]
		if prefix, ok := m.aclPrefix(f.ResourceType); ok && f.ResourceName != nil {
			if name, pt, ok := upDeleteFilterPattern(prefix, *f.ResourceName, f.ResourcePatternType, r.Version); ok {
				f.ResourceName, f.ResourcePatternType = &name, pt
				continue
			}
		}
		switch f.ResourceType {
		case kmsg.ACLResourceTypeCluster, kmsg.ACLResourceTypeDelegationToken, kmsg.ACLResourceTypeUser:
			rf.refuse(i, kerr.ClusterAuthorizationFailed, fmt.Sprintf(msgClusterACL, aclTypeName(f.ResourceType)))
		default:
			rf.refuse(i, kerr.InvalidRequest, msgNotConfined)
		}
	}
	return answerRefused(rf, r, func(resp *kmsg.DeleteACLsResponse, code int16, msg *string) {
		res := kmsg.NewDeleteACLsResponseResult()
		res.ErrorCode, res.ErrorMessage = code, msg
		resp.Results = append(resp.Results, res)
	})
}

// upDeleteFilterPattern is the upstream pattern of a delete filter's
// (name, pt) when it matches exactly the tenant ACLs the tenant's filter
// matches; false otherwise.
func upDeleteFilterPattern(prefix, name string, pt kmsg.ACLResourcePatternType, version int16) (string, kmsg.ACLResourcePatternType, bool) {
	if prefix == "" {
		return name, pt, true
	}
	switch pt {
	case kmsg.ACLResourcePatternTypeLiteral:
		up, upPT := upACLPattern(prefix, name, pt)
		return up, upPT, upPT == pt || version >= 1
	case kmsg.ACLResourcePatternTypePrefixed:
		return prefix + name, pt, name != ""
	case kmsg.ACLResourcePatternTypeAny:
		return prefix + name, pt, name != aclWildcard && name != ""
	}
	return "", pt, false
}

func downDeleteACLs(m *Mapper, _ *kmsg.DeleteACLsRequest, resp *kmsg.DeleteACLsResponse) error {
	for i := range resp.Results {
		res := &resp.Results[i]
		m.DownMessage(res.ErrorMessage)
		kept := res.MatchingACLs[:0]
		for _, a := range res.MatchingACLs {
			if m.downACL(a.ResourceType, &a.ResourceName, &a.ResourcePatternType, true) {
				m.DownMessage(a.ErrorMessage)
				kept = append(kept, a)
			}
		}
		clear(res.MatchingACLs[len(kept):])
		res.MatchingACLs = kept
	}
	return nil
}

// entryRefusals is why kproxy refuses entries of a request it then
// answers as a whole.
type entryRefusals struct {
	errs []*kerr.Error
	msgs []string
	any  bool
}

func newEntryRefusals(n int) *entryRefusals {
	return &entryRefusals{errs: make([]*kerr.Error, n), msgs: make([]string, n)}
}

func (r *entryRefusals) refuse(i int, e *kerr.Error, msg string) {
	r.errs[i], r.msgs[i], r.any = e, msg, true
}

// answerRefused is nil when no entry was refused; else kproxy's answer to
// req, add giving it every entry's error in order: its refusal, or for an
// entry that was fine, that it was not run.
func answerRefused[Resp kmsg.Response](r *entryRefusals, req kmsg.Request, add func(resp Resp, code int16, msg *string)) error {
	if !r.any {
		return nil
	}
	resp := req.ResponseKind().(Resp)
	resp.SetVersion(req.GetVersion())
	for i, e := range r.errs {
		if e == nil {
			add(resp, kerr.InvalidRequest.Code, kmsg.StringPtr(msgNotRun))
			continue
		}
		add(resp, e.Code, kmsg.StringPtr(r.msgs[i]))
	}
	return &Answer{Response: resp}
}

func aclTypeName(rt kmsg.ACLResourceType) string {
	switch rt {
	case kmsg.ACLResourceTypeAny:
		return "ANY-type"
	case kmsg.ACLResourceTypeCluster:
		return "CLUSTER"
	case kmsg.ACLResourceTypeDelegationToken:
		return "DELEGATION_TOKEN"
	case kmsg.ACLResourceTypeUser:
		return "USER"
	}
	return fmt.Sprintf("resource type %d", rt)
}
