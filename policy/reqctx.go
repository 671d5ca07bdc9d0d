package policy

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/protocol"
)

// reqCtx is one request's view of the policy: the state it is checked
// against, who sent it, and the table entry that says what it may ask.
type reqCtx struct {
	e  *Enforcer
	st *state
	// prin and client are copied from the engine's filter.Conn, which must
	// not be kept past the handler: response hooks run later, on another
	// goroutine, while the connection's next request updates it.
	prin   Principal
	client netip.AddrPort
	subj   *ruleSubject
	entry  *apiEntry
	key    int16
	// forced, when set, is the answer to every check: forbidden_apis uses
	// it to refuse each part of a request with POLICY_VIOLATION through the
	// same code paths that answer authorization failures.
	forced *denial
	gov    []*govRule // governance rules whose principals match
}

// decide asks the engine, refusing pairs the table entry does not list:
// the table is the contract, and a handler asking anything else is a bug
// that must fail closed.
func (c *reqCtx) decide(op Operation, rt ResourceType, name string) Decision {
	if !c.entry.lists(op, rt) {
		c.e.tableMisses.Add(1)
		c.e.log.Error().Str("api", protocol.APIName(c.key)).Stringer("operation", op).Stringer("resource_type", rt).
			Msg("policy handler asked for an operation its table entry does not list; denied")
		return Decision{Rule: "table"}
	}
	return c.subj.Decide(op, rt, name)
}

// check decides op on a resource and records the decision. It returns nil
// when the request may go on (allowed, or denied in audit mode) and
// otherwise the denial to answer with.
func (c *reqCtx) check(op Operation, rt ResourceType, name string) *denial {
	if c.forced != nil {
		return c.forced
	}
	return c.record(op, rt, name, c.decide(op, rt, name))
}

// checkEither allows the request if any of the alternatives is allowed,
// as Kafka does for CreateTopics (Create on the cluster or on the topic).
// Only the deciding answer is recorded: the last alternative's denial when
// none is allowed.
func (c *reqCtx) checkEither(name string, alts ...need) *denial {
	if c.forced != nil {
		return c.forced
	}
	var d Decision
	var last need
	for _, a := range alts {
		resName := name
		if a.res == ResCluster {
			resName = ClusterName
		}
		last = a
		if d = c.decide(a.op, a.res, resName); d.Allowed {
			return c.record(a.op, a.res, resName, d)
		}
	}
	if last.res == ResCluster {
		name = ClusterName
	}
	return c.record(last.op, last.res, name, d)
}

// checkCluster decides op on the cluster resource.
func (c *reqCtx) checkCluster(op Operation) *denial { return c.check(op, ResCluster, ClusterName) }

func (c *reqCtx) record(op Operation, rt ResourceType, name string, d Decision) *denial {
	m := c.e.metrics
	if d.Allowed {
		m.allow.Inc()
		m.countRule(DecisionAllow, op.String(), d.Rule, 1)
		if c.st.logAllowed {
			c.audit(DecisionAllow, op.String(), rt.String(), name, d.Rule, "")
		}
		return nil
	}
	if c.st.auditOnly {
		m.auditDeny.Inc()
		m.countRule(DecisionAuditDeny, op.String(), d.Rule, 1)
		c.audit(DecisionAuditDeny, op.String(), rt.String(), name, d.Rule, "")
		return nil
	}
	m.deny.Inc()
	m.countRule(DecisionDeny, op.String(), d.Rule, 1)
	c.audit(DecisionDeny, op.String(), rt.String(), name, d.Rule, "")
	return &denial{code: rt.DeniedCode(), msg: c.deniedMessage(op, rt, name, d.Rule)}
}

// visible decides whether a listing (Metadata for all topics, ListGroups,
// ...) may show a resource. As Kafka's authorizer does for such filtering,
// what is hidden is counted but not logged unless audit.log_allowed is set.
func (c *reqCtx) visible(op Operation, rt ResourceType, name string) bool {
	if c.forced != nil {
		return false
	}
	d := c.decide(op, rt, name)
	m := c.e.metrics
	switch {
	case d.Allowed:
		m.allow.Inc()
		m.countRule(DecisionAllow, op.String(), d.Rule, 1)
		if c.st.logAllowed {
			c.audit(DecisionAllow, op.String(), rt.String(), name, d.Rule, "")
		}
		return true
	case c.st.auditOnly:
		m.auditDeny.Inc()
		m.countRule(DecisionAuditDeny, op.String(), d.Rule, 1)
		if c.st.logAllowed {
			c.audit(DecisionAuditDeny, op.String(), rt.String(), name, d.Rule, "hidden from a listing")
		}
		return true
	}
	m.hide.Inc()
	m.countRule(DecisionHide, op.String(), d.Rule, 1)
	if c.st.logAllowed {
		c.audit(DecisionHide, op.String(), rt.String(), name, d.Rule, "hidden from a listing")
	}
	return false
}

// violated records a governance violation on a resource and returns the
// denial to answer with, or nil in audit mode.
func (c *reqCtx) violated(v *violation, rt ResourceType, name string) *denial {
	if c.forced != nil {
		return c.forced
	}
	d := v.denial()
	if c.st.auditOnly {
		c.e.metrics.auditDeny.Inc()
		c.e.metrics.countRule(DecisionAuditDeny, v.check, v.rule, 1)
		c.audit(DecisionAuditDeny, v.check, rt.String(), name, v.rule, d.msg)
		return nil
	}
	c.e.metrics.deny.Inc()
	c.e.metrics.countRule(DecisionDeny, v.check, v.rule, 1)
	c.audit(DecisionDeny, v.check, rt.String(), name, v.rule, d.msg)
	return d
}

func (c *reqCtx) deniedMessage(op Operation, rt ResourceType, name, rule string) string {
	if rule == DefaultRule {
		return fmt.Sprintf("kproxy policy: %s on %s %q denied to %s: no rule allows it (policy.default: deny)", op, rt, name, c.prin)
	}
	return fmt.Sprintf("kproxy policy: %s on %s %q denied to %s by rule %q", op, rt, name, c.prin, rule)
}

// audit queues one audit line. name may alias the request frame, which
// kproxy reuses once the request is forwarded, and the line is written
// later: it gets a copy.
func (c *reqCtx) audit(decision, op, rt, name, rule, reason string) {
	c.e.audit.emit(auditEvent{
		time:      time.Now(),
		principal: c.prin.String(),
		client:    c.client.String(),
		clientID:  c.prin.ClientID,
		listener:  c.prin.Listener,

		virtualCluster: c.prin.VirtualCluster,
		api:            protocol.APIName(c.key),
		operation:      op,
		resourceType:   rt,
		resource:       strings.Clone(name),
		decision:       decision,
		rule:           rule,
		reason:         reason,
	})
}

// governance returns the governance rules that apply to this request's
// principal.
func (c *reqCtx) governance() []*govRule {
	if c.gov == nil && len(c.st.gov.rules) > 0 {
		c.gov = make([]*govRule, 0, len(c.st.gov.rules))
		for i := range c.st.gov.rules {
			if anyPrincipal(c.st.gov.rules[i].principals, &c.prin) {
				c.gov = append(c.gov, &c.st.gov.rules[i])
			}
		}
	}
	return c.gov
}

// topicName resolves a topic named by name or, from v13-style requests, by
// id. ok is false for an id kproxy has not seen in a response and, with a
// resolver, the cluster does not know either.
func (c *reqCtx) topicName(name string, id [16]byte) (string, bool) {
	if name != "" || id == ([16]byte{}) {
		return name, true
	}
	if c.e.resolver != nil {
		return c.e.resolver.Name(context.Background(), id)
	}
	return c.e.ids.name(id)
}

// unknownTopic is the answer for a topic id kproxy cannot name: the
// client refreshes its metadata (through kproxy, which learns the id) and
// retries. Audit mode forwards it unchanged: it must not alter traffic.
func (c *reqCtx) unknownTopic(id [16]byte) *denial {
	switch {
	case c.forced != nil:
		return c.forced
	case c.st.auditOnly:
		return nil
	}
	return c.unknownTopicMessage(id)
}

// unknownTopicMessage is unknownTopic's answer, also given for the id of a
// topic the principal may not describe: the two must not differ.
func (c *reqCtx) unknownTopicMessage(id [16]byte) *denial {
	return &denial{code: errUnknownTopicID, msg: fmt.Sprintf("kproxy policy: topic id %x is unknown to kproxy; refresh metadata", id)}
}

// split finishes a request some of whose parts were denied. When every
// part was, the request never reaches the upstream: merge builds the whole
// answer from an empty response. Otherwise strip removes the denied parts
// and merge adds their errors to the upstream's answer.
func (c *reqCtx) split(req kmsg.Request, allDenied bool, strip func(), merge func(kmsg.Response) error) filter.Verdict {
	if allDenied {
		resp := req.ResponseKind()
		if err := merge(resp); err != nil {
			return filter.Verdict{Close: err}
		}
		return filter.Verdict{Respond: resp}
	}
	strip()
	return filter.Verdict{Modified: true, OnResponse: merge}
}
