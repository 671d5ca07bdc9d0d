package policy

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/labels"
	"github.com/kproxy/kproxy/internal/quota"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// Decisions, as the audit line's "decision" field and the decision label
// of kproxy_policy_decisions_total and kproxy_policy_rule_decisions_total
// write them: the one vocabulary, internal/labels.
const (
	DecisionAllow     = labels.Allow
	DecisionDeny      = labels.Deny
	DecisionAuditDeny = labels.AuditDeny // audit mode: would be denied, forwarded
	DecisionHide      = labels.Hide      // left out of a listing
	DecisionThrottle  = labels.Throttle  // a quota throttled the request (sampled)
)

// auditEvent is one audit log line, captured on the data path and
// formatted by the writer goroutine.
type auditEvent struct {
	time      time.Time
	principal string
	client    string
	clientID  string
	listener  string
	// virtualCluster is written only when set, so that a file without
	// virtual_clusters writes the lines it always has.
	virtualCluster string
	api            string
	operation      string
	resourceType   string
	resource       string
	decision       string
	rule           string
	reason         string
	// throttle is set for DecisionThrottle, whose line names the quota
	// instead of an API and a resource.
	throttle *quota.Throttle
}

// auditLog writes audit events as JSON lines from a background goroutine,
// started by the first event (a cluster that is never audited costs no
// queue). emit never blocks: when the bounded queue is full the event is
// dropped and counted, because an audit log must not slow the data path
// down.
type auditLog struct {
	out      io.Writer
	buffered bool
	size     int
	dropped  prometheus.Counter

	start     sync.Once
	queue     chan auditEvent // nil until started; stays nil if closed first
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// newAuditLog makes the writer. Unbuffered, each line is written with one
// Write call, so lines never interleave with other writers of out (kproxy's
// own log on stdout); buffered (a file of its own), lines are flushed
// whenever the queue runs empty.
func newAuditLog(out io.Writer, buffered bool, size int, dropped prometheus.Counter) *auditLog {
	return &auditLog{out: out, buffered: buffered, size: size, dropped: dropped}
}

func (a *auditLog) emit(ev auditEvent) {
	a.start.Do(func() {
		a.queue = make(chan auditEvent, a.size)
		a.stop = make(chan struct{})
		a.done = make(chan struct{})
		go a.run()
	})
	select {
	case a.queue <- ev:
	default:
		a.dropped.Inc()
	}
}

func (a *auditLog) run() {
	defer close(a.done)
	out := a.out
	var flush func() error
	if a.buffered {
		bw := bufio.NewWriterSize(out, 64<<10)
		out, flush = bw, bw.Flush
	}
	log := zerolog.New(out)
	write := func(ev auditEvent) {
		e := log.Log().
			Str("time", ev.time.UTC().Format(time.RFC3339Nano)).
			Str("principal", ev.principal).
			Str("client", ev.client).
			Str("client_id", ev.clientID).
			Str("listener", ev.listener)
		if ev.virtualCluster != "" {
			e = e.Str(labels.VirtualCluster, ev.virtualCluster)
		}
		if t := ev.throttle; t != nil {
			e.Str(labels.Decision, DecisionThrottle).
				Str(labels.Quota, t.Quota).
				Str(labels.Kind, t.Kind.String()).
				Float64("throttle_ms", float64(t.Throttle)/float64(time.Millisecond)).
				Float64("sample_rate", t.SampleRate).
				Send()
			return
		}
		e = e.Str("api", ev.api).
			Str(labels.Operation, ev.operation).
			Str("resource_type", ev.resourceType).
			Str("resource", ev.resource).
			Str(labels.Decision, ev.decision).
			Str(labels.Rule, ev.rule)
		if ev.reason != "" {
			e = e.Str("reason", ev.reason)
		}
		e.Send()
	}
	for {
		select {
		case ev := <-a.queue:
			write(ev)
			if len(a.queue) == 0 && flush != nil {
				flush()
			}
		case <-a.stop:
			for {
				select {
				case ev := <-a.queue:
					write(ev)
				default:
					if flush != nil {
						flush()
					}
					return
				}
			}
		}
	}
}

// close writes what is queued and stops the writer. Events emitted after
// close are dropped.
func (a *auditLog) close() {
	a.closeOnce.Do(func() {
		a.start.Do(func() {}) // never started: stays stopped
		if a.queue != nil {
			close(a.stop)
			<-a.done
		}
	})
}

// throttleEvent is the audit line of a throttled request.
func throttleEvent(t quota.Throttle) auditEvent {
	client := ""
	if t.Client.IsValid() {
		client = t.Client.String()
	}
	return auditEvent{
		time: t.Time, principal: t.Principal, client: client, clientID: t.ClientID,
		listener: t.Listener, virtualCluster: t.VirtualCluster, throttle: &t,
	}
}

// openAuditOutput makes the writer of audit.output: w when set (a file
// already opened for several clusters), else standard output or the
// file, which the returned closer closes (nil for the others).
func openAuditOutput(a *policyconfig.Audit, w io.Writer, dropped prometheus.Counter) (*auditLog, io.Closer, error) {
	size := policyconfig.DefaultAuditBufferSize
	if a != nil && a.BufferSize > 0 {
		size = a.BufferSize
	}
	if w != nil {
		return newAuditLog(w, false, size, dropped), nil, nil
	}
	if a == nil || a.Output == "" || a.Output == policyconfig.AuditStdout {
		return newAuditLog(os.Stdout, false, size, dropped), nil, nil
	}
	f, err := os.OpenFile(a.Output, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, nil, fmt.Errorf("audit.output: %w", err)
	}
	return newAuditLog(f, true, size, dropped), f, nil
}

// AuditLog is audit.output for a cluster without an Enforcer (its policy
// holds quotas alone, or nothing until a reload brings quotas): it writes
// the quota engine's throttle lines. With an Enforcer, the Enforcer is
// the quota engine's Auditor, so that one writer serves both.
type AuditLog struct {
	log  *auditLog
	file io.Closer
}

var (
	_ quota.Auditor = (*AuditLog)(nil)
	_ quota.Auditor = (*Enforcer)(nil)
)

// NewAuditLog opens audit.output as New would (WithAuditWriter and
// WithRegisterer apply; its dropped lines count in
// kproxy_policy_audit_dropped_total). Close stops it.
func NewAuditLog(a *policyconfig.Audit, opts ...Option) (*AuditLog, error) {
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	if o.reg == nil {
		o.reg = prometheus.NewRegistry()
	}
	dropped := newAuditDropped()
	if err := o.reg.Register(dropped); err != nil {
		return nil, fmt.Errorf("audit metrics: %w", err)
	}
	log, file, err := openAuditOutput(a, o.audit, dropped)
	if err != nil {
		return nil, err
	}
	return &AuditLog{log: log, file: file}, nil
}

// AuditThrottle queues the audit line of a throttled request.
func (l *AuditLog) AuditThrottle(t quota.Throttle) { l.log.emit(throttleEvent(t)) }

// Close writes the queued lines and stops the writer.
func (l *AuditLog) Close() error {
	l.log.close()
	if l.file != nil {
		return l.file.Close()
	}
	return nil
}

// AuditThrottle queues the audit line of a throttled request, beside the
// policy's decisions.
func (e *Enforcer) AuditThrottle(t quota.Throttle) { e.audit.emit(throttleEvent(t)) }
