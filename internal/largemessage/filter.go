// Package largemessage is the large message offload filter: on produce it
// stores the large values of the matching topics' records in an S3 bucket
// and forwards KafScale's pointer record in their place; on fetch it
// replaces the pointers by the stored values (docs/large-messages.md).
package largemessage

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/largemessage/largemessageconfig"
	"github.com/kproxy/kproxy/internal/largemessage/pointer"
	"github.com/kproxy/kproxy/internal/objectstore"
	"github.com/kproxy/kproxy/rewrite/records"
)

// Filter offloads and resolves the values of one cluster (the file, or
// one virtual cluster).
type Filter struct {
	namespace string // the object keys' first segment: the virtual cluster, or "default"
	proxyID   string // the pointers' proxy_id
	store     Store
	rules     atomic.Pointer[rules]
	resolve   atomic.Bool
	maxObject int64
	storeCfg  largemessageconfig.S3Config // as started: a change needs a restart
	names     filter.TopicNames
	txns      transactions
	deleters  chan struct{} // a slot per orphan deletion running in the background
	workers   sync.Pool     // *worker
	log       zerolog.Logger
	metrics   *metrics
}

// Options is what New needs besides the section.
type Options struct {
	Env filter.Env
	// Store replaces the bucket the section names (tests).
	Store Store
}

// New builds the filter of one cluster from its validated section.
func New(cfg *largemessageconfig.Config, opts Options) (*Filter, error) {
	cfg.SetDefaults()
	rs, err := compileRules(cfg)
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(opts.Env.Metrics)
	if err != nil {
		return nil, fmt.Errorf("large_messages metrics: %w", err)
	}
	store := opts.Store
	if store == nil {
		if cfg.Store.S3 == nil {
			return nil, fmt.Errorf("store.s3 is not set")
		}
		if store, err = objectstore.NewS3(context.Background(), cfg.Store.S3.Store()); err != nil {
			return nil, err
		}
	}
	ns := opts.Env.VirtualCluster
	if ns == "" {
		ns = pointer.DefaultNamespace
	}
	host, _ := os.Hostname()
	f := &Filter{namespace: ns, proxyID: "kproxy-" + host, store: store, maxObject: cfg.MaxObjectBytes,
		deleters: make(chan struct{}, maxDeleters),
		log:      opts.Env.Log.With().Str("filter", largemessageconfig.SectionName).Logger(), metrics: m}
	if cfg.Store.S3 != nil {
		f.storeCfg = *cfg.Store.S3
	}
	f.rules.Store(rs)
	f.resolve.Store(cfg.Resolves())
	f.workers.New = func() any { return newWorker(f) }
	return f, nil
}

// Register makes f see every Produce request, the EndTxn requests that
// end transactions, every Fetch and ShareFetch request and its response, and the Metadata responses that
// name topic ids.
func (f *Filter) Register(r *filter.Registry) {
	filter.OnRequest(r, f.produce, filter.DecideRaw(f.produceRaw))
	filter.OnRequest(r, f.endTxn)
	filter.OnRequest(r, f.fetchRequest)
	filter.OnRequest(r, f.shareFetchRequest)
	filter.OnRequest(r, f.apiVersions)
	filter.OnResponse(r, f.names.Learn)
}

// Reload applies a changed topics list and resolve_on_fetch to the next
// request. The store and max_object_bytes apply at the next restart.
func (f *Filter) Reload(cfg *largemessageconfig.Config, log zerolog.Logger) error {
	cfg.SetDefaults()
	rs, err := compileRules(cfg)
	if err != nil {
		return err
	}
	f.rules.Store(rs)
	f.resolve.Store(cfg.Resolves())
	if (cfg.Store.S3 != nil && *cfg.Store.S3 != f.storeCfg) || cfg.MaxObjectBytes != f.maxObject {
		log.Warn().Str("section", largemessageconfig.SectionName).Msg("large_messages.store or max_object_bytes changed: it takes effect only after a restart")
	}
	log.Info().Int("topic_rules", len(rs.list)).Bool("resolve_on_fetch", cfg.Resolves()).Msg("large message rules reloaded")
	return nil
}

// maxBatchBytes bounds one record batch as the rewriter reads it, on the
// wire and decompressed: one value of max_object_bytes and the records
// around it, within what a Kafka frame can hold.
func (f *Filter) maxBatchBytes() int {
	return int(min(f.maxObject+1<<20, math.MaxInt32))
}

// worker is one handler call's reusable state.
type worker struct {
	rw      *records.Rewriter
	offload offloading
	resolve resolving
	summary produceSummary
}

func newWorker(f *Filter) *worker {
	w := &worker{rw: records.NewRewriter(f.maxBatchBytes())}
	w.offload.f, w.resolve.f = f, f
	w.offload.fn, w.resolve.fn = w.offload.record, w.resolve.record
	return w
}

func (f *Filter) worker() *worker { return f.workers.Get().(*worker) }

// done returns w to the pool, unless it handled large values: its
// buffers have grown to their size, and the pool would keep them.
func (f *Filter) done(w *worker) {
	if w.offload.bytes > maxPooledBytes || w.resolve.bytes > maxPooledBytes || cap(w.resolve.buf) > maxPooledBytes {
		return
	}
	f.workers.Put(w)
}

// maxPooledBytes bounds the values a pooled worker has handled.
const maxPooledBytes = 1 << 20
