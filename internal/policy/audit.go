package policy

import (
	"bufio"
	"io"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Audit decisions, as the "decision" field writes them.
const (
	DecisionAllow     = "allow"
	DecisionDeny      = "deny"
	DecisionAuditDeny = "audit_deny" // audit mode: would be denied, forwarded
	DecisionHide      = "hide"       // left out of a listing
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
}

// auditLog writes audit events as JSON lines from a background goroutine.
// emit never blocks: when the bounded queue is full the event is dropped
// and counted, because an audit log must not slow the data path down.
type auditLog struct {
	queue   chan auditEvent
	dropped prometheus.Counter
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// newAuditLog starts the writer. Unbuffered, each line is written with one
// Write call, so lines never interleave with other writers of out (kproxy's
// own log on stdout); buffered (a file of its own), lines are flushed
// whenever the queue runs empty.
func newAuditLog(out io.Writer, buffered bool, size int, dropped prometheus.Counter) *auditLog {
	a := &auditLog{
		queue:   make(chan auditEvent, size),
		dropped: dropped,
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go a.run(out, buffered)
	return a
}

func (a *auditLog) emit(ev auditEvent) {
	select {
	case a.queue <- ev:
	default:
		a.dropped.Inc()
	}
}

func (a *auditLog) run(out io.Writer, buffered bool) {
	defer close(a.done)
	var flush func() error
	if buffered {
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
			e = e.Str("virtual_cluster", ev.virtualCluster)
		}
		e = e.Str("api", ev.api).
			Str("operation", ev.operation).
			Str("resource_type", ev.resourceType).
			Str("resource", ev.resource).
			Str("decision", ev.decision).
			Str("rule", ev.rule)
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

// close writes what is queued and stops the writer.
func (a *auditLog) close() {
	a.once.Do(func() { close(a.stop) })
	<-a.done
}
