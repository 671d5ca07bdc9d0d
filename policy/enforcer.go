package policy

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/topicids"
	"github.com/kproxy/kproxy/policy/policyconfig"
	"github.com/kproxy/kproxy/protocol"
)

// Enforcer is the policy's filter.Filter: a request handler for every API
// of the operation table. It holds the current
// compiled policy behind an atomic pointer: Reload applies a new one to the
// next request on every connection, and a request in flight finishes under
// the policy it started with. Safe for concurrent use.
type Enforcer struct {
	cur     atomic.Pointer[state]
	table   []*apiEntry // by API key
	ids     topicIDs
	audit   *auditLog
	auditTo io.Closer // the audit file, if kproxy opened one
	metrics *policyMetrics
	log     zerolog.Logger
	// tableMisses counts handler questions the table does not list (bugs;
	// tests assert none).
	tableMisses atomic.Uint64
	// summaries recycles the *wire.ProduceSummary decideProduceRaw
	// reads produces into.
	summaries sync.Pool

	// resolver asks the cluster for ids not learned here; nil: none.
	resolver *topicids.Resolver
}

var _ filter.Filter = (*Enforcer)(nil)

// Option configures an Enforcer.
type Option func(*options)

type options struct {
	log   zerolog.Logger
	reg   prometheus.Registerer
	audit io.Writer
	// resolver: WithTopicResolver (topicresolver.go).
	resolver Requester
}

// WithLogger sets the logger for kproxy's own messages (not the audit log).
func WithLogger(log zerolog.Logger) Option { return func(o *options) { o.log = log } }

// WithRegisterer registers the policy metrics with reg (default: a
// private registry).
func WithRegisterer(reg prometheus.Registerer) Option { return func(o *options) { o.reg = reg } }

// WithAuditWriter sends audit lines to w instead of audit.output.
func WithAuditWriter(w io.Writer) Option { return func(o *options) { o.audit = w } }

// New builds an Enforcer for a validated policy section (nil: no policy,
// every request is forwarded unchecked until a reload brings one) and
// starts its audit writer. Close stops it.
func New(p *policyconfig.Policy, a *policyconfig.Audit, opts ...Option) (*Enforcer, error) {
	o := options{log: zerolog.Nop()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.reg == nil {
		o.reg = prometheus.NewRegistry()
	}
	st, err := compileState(p, a)
	if err != nil {
		return nil, fmt.Errorf("compile policy: %w", err)
	}
	e := &Enforcer{log: o.log, metrics: newMetrics(o.reg)}
	if o.resolver != nil {
		e.resolver = topicids.NewResolver(o.resolver, &e.ids.m)
	}
	e.table = tableByKey(operationTable())

	if e.audit, e.auditTo, err = openAuditOutput(a, o.audit, e.metrics.auditDropped); err != nil {
		return nil, err
	}
	e.cur.Store(st)
	return e, nil
}

// Reload compiles a validated policy section and, if that succeeds, makes
// it the policy for every request from now on. On error the current policy
// stays. A nil p removes the policy: requests are forwarded unchecked. Of
// the audit settings only log_allowed can change without a restart.
func (e *Enforcer) Reload(p *policyconfig.Policy, a *policyconfig.Audit) error {
	st, err := compileState(p, a)
	if err != nil {
		e.metrics.reloadFailed.Inc()
		return fmt.Errorf("compile policy: %w", err)
	}
	e.cur.Store(st)
	e.metrics.reloadOK.Inc()
	return nil
}

// reloadFailed counts a reload that failed before reaching Reload (an
// unreadable or invalid file).
func (e *Enforcer) reloadFailed() { e.metrics.reloadFailed.Inc() }

// Active reports whether a policy is in force, and describes it.
func (e *Enforcer) Active() (bool, string) {
	st := e.cur.Load()
	if st == nil {
		return false, "no policy"
	}
	return true, st.String()
}

// Close writes the queued audit lines and stops the audit writer.
func (e *Enforcer) Close() error {
	e.audit.close()
	if e.auditTo != nil {
		return e.auditTo.Close()
	}
	return nil
}

// Phase places the enforcer in filter.PhaseAuthorize: it decides a
// request, in the tenant's names, before quotas and the program's filters
// see it. What it hides from a response it hides in its request's
// Verdict.OnResponse hook, which runs before every response handler.
func (e *Enforcer) Phase() filter.Phase { return filter.PhaseAuthorize }

// Register registers the handler of every API the operation table covers
// except ApiVersions and the SASL exchange, which are always allowed and
// so are never decoded for the policy. Keys kmsg does not know never reach
// a handler: the engine closes connections that send them.
func (e *Enforcer) Register(r *filter.Registry) {
	for _, row := range e.table {
		switch {
		case row == nil || row.setup:
		case row.handle == nil:
			// Unreachable while the coverage test passes; fails closed if
			// a row lacks its handler.
			anyKey(unlisted)(e, r, row)
		default:
			row.handle(e, r, row)
		}
	}
}

// unlisted denies an API whose row has no handler.
func unlisted(c *reqCtx, req kmsg.Request) filter.Verdict {
	return denyTopLevel(req, &denial{code: errClusterAuthorizationFailed,
		msg: fmt.Sprintf("kproxy policy: %s has no handler in the operation table; denied", protocol.APIName(c.key))})
}

// decide decides req, of row's API, under the current policy: the
// connection-wide governance first, then the row's enforcement.
func decide[R kmsg.Request](e *Enforcer, row *apiEntry, conn *filter.Conn, req R, enforce func(*reqCtx, R) filter.Verdict) filter.Verdict {
	st := e.cur.Load()
	if st == nil {
		return filter.Verdict{}
	}
	c := &reqCtx{e: e, st: st, prin: principalOf(conn), client: conn.Client, key: int16(row.key), entry: row}
	c.subj = st.subject(&c.prin)
	if st.gov.hasClientID || st.gov.forbids {
		if v, forced, stop := c.connectionGovernance(); stop {
			if forced == nil {
				return v
			}
			// Every part of req is answered with forced: through the API's
			// own enforcement with every check forced to it, so that
			// per-resource errors land where the client looks for them,
			// else in the top-level error code.
			c.forced = forced
			if v := enforce(c, req); v.Respond != nil || v.Close != nil {
				return v
			}
			return denyTopLevel(req, forced)
		}
	}
	return enforce(c, req)
}

// connectionGovernance applies client_id_pattern and forbidden_apis. stop
// says the request is decided: by v, or, when forced is set, by denying
// all of it with forced.
func (c *reqCtx) connectionGovernance() (v filter.Verdict, forced *denial, stop bool) {
	for _, g := range c.governance() {
		if g.clientID != nil && !g.clientID.match(c.prin.ClientID) {
			v := &violation{rule: g.name, check: "client_id_pattern", code: errPolicyViolation,
				what: fmt.Sprintf("client id %q does not match client_id_pattern %q", c.prin.ClientID, g.clientID.source)}
			if d := c.violated(v, ResCluster, ClusterName); d != nil {
				return filter.Verdict{Close: fmt.Errorf("%s: closing the connection", d.msg)}, nil, true
			}
		}
		if g.forbidden[c.key] {
			v := &violation{rule: g.name, check: "forbidden_apis", code: errPolicyViolation,
				what: fmt.Sprintf("%s is a forbidden API", protocol.APIName(c.key))}
			if d := c.violated(v, ResCluster, ClusterName); d != nil {
				return filter.Verdict{}, d, true
			}
		}
	}
	return filter.Verdict{}, nil, false
}
