package encryption

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/encryption/encryptionconfig"
	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/kms"
	"github.com/kproxy/kproxy/rewrite/records"
)

// maxBatchBytes bounds one record batch, on the wire and decompressed, as
// the encryption filter reads it: well above a broker's default
// message.max.bytes (1 MiB) and a client's fetch.max.bytes per partition.
const maxBatchBytes = 64 << 20

// Filter encrypts the records produced to the topics its rules match and
// decrypts the records fetched that carry the envelope's marker, for one
// cluster (the file, or one virtual cluster).
type Filter struct {
	vc          string
	topicPrefix string // the virtual cluster's: records are bound to the broker-side name
	keys        *kms.DataKeys
	rules       atomic.Pointer[rules]
	names       filter.TopicNames
	sealers     sealers
	openers     openers
	workers     sync.Pool // *worker
	recordBufs  *recordBufs
	log         zerolog.Logger
	metrics     *metrics
	passthrough sync.Map // client topic name -> struct{}: logged once
	keyNames    sync.Map // KEK names used, retired on reload
	// startedKMS and startedDEK are what a reload cannot change: the
	// client and the data keys' bounds are built once.
	startedKMS encryptionconfig.KMSConfig
	startedDEK encryptionconfig.DEKConfig
}

// Options is what New needs besides the section.
type Options struct {
	Env filter.Env
	// TopicPrefix is the virtual cluster's topic_prefix: what the cluster
	// adds to the client's topic names.
	TopicPrefix string
	// Provider replaces the KMS the section names (tests).
	Provider kms.Provider
}

// New builds the filter of one cluster from its validated section.
func New(cfg *encryptionconfig.Config, opts Options) (*Filter, error) {
	cfg.SetDefaults()
	rs, err := compileRules(cfg)
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(opts.Env.Metrics)
	if err != nil {
		return nil, fmt.Errorf("encryption metrics: %w", err)
	}
	provider := opts.Provider
	if provider == nil {
		if cfg.KMS.AWSKMS == nil {
			return nil, fmt.Errorf("kms.aws_kms is not set")
		}
		if provider, err = kms.NewAWS(context.Background(), cfg.KMS.AWSKMS.Provider()); err != nil {
			return nil, fmt.Errorf("kms.aws_kms: %w", err)
		}
	}
	keys, err := kms.NewDataKeys(countingProvider{Provider: provider, m: m}, cfg.DataKeys())
	if err != nil {
		return nil, err
	}
	f := &Filter{vc: opts.Env.VirtualCluster, topicPrefix: opts.TopicPrefix, keys: keys,
		log: opts.Env.Log.With().Str("filter", encryptionconfig.SectionName).Logger(), metrics: m,
		startedKMS: cfg.KMS, startedDEK: cfg.DEK, recordBufs: newRecordBufs()}
	f.rules.Store(rs)
	f.workers.New = func() any { return newWorker(f) }
	return f, nil
}

// Register makes f see every Produce request, every Fetch and ShareFetch
// response, and the Metadata responses that name topic ids.
func (f *Filter) Register(r *filter.Registry) {
	filter.OnRequest(r, f.produce)
	filter.OnResponseReleasing(r, f.fetch, filter.NeedByVersion(fetchNeed), filter.InspectRaw(fetchWantsDecoding))
	filter.OnResponseReleasing(r, f.shareFetch, filter.NeedByVersion(shareFetchNeed), filter.InspectRaw(shareFetchWantsDecoding))
	filter.OnResponse(r, f.names.Learn)
}

// Reload applies a changed topics list, key templates and on_missing_key
// to the next request, and retires the data keys in use, so that the next
// records get a new one under the KEK the key names now (a rotated alias
// included). The KMS and dek bounds apply at the next restart, which a
// changed one logs as config.Reloader does for a section.
func (f *Filter) Reload(cfg *encryptionconfig.Config, log zerolog.Logger) error {
	cfg.SetDefaults()
	rs, err := compileRules(cfg)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(cfg.KMS, f.startedKMS) {
		log.Warn().Str("section", encryptionconfig.SectionName+".kms").Msg(config.RestartNeededMessage)
	}
	if cfg.DEK != f.startedDEK {
		log.Warn().Str("section", encryptionconfig.SectionName+".dek").Msg(config.RestartNeededMessage)
	}
	f.rules.Store(rs)
	retired := 0
	f.keyNames.Range(func(k, _ any) bool {
		f.keys.Retire(k.(string))
		f.keyNames.Delete(k)
		retired++
		return true
	})
	f.passthrough.Clear()
	log.Info().Int("topic_rules", len(rs.list)).Int("data_keys_retired", retired).Msg("encryption rules reloaded; new data keys for the next records")
	return nil
}

// brokerTopic is the name the cluster knows topic by, which the records'
// authenticated data binds.
func (f *Filter) brokerTopic(topic string) string { return f.topicPrefix + topic }

// worker is one handler call's reusable state.
type worker struct {
	rw         *records.Rewriter
	seal       sealing
	open       opening
	markerName []byte // envelope.HeaderName: only records holding it are opened
}

func newWorker(f *Filter) *worker {
	w := &worker{rw: records.NewRewriter(maxBatchBytes)}
	w.seal.f, w.open.f = f, f
	w.seal.value.s, w.open.value.o = &w.seal, &w.open
	w.seal.fn, w.open.fn = w.seal.record, w.open.record
	w.markerName = []byte(envelope.HeaderName)
	w.seal.markerName = w.markerName
	return w
}

func (f *Filter) worker() *worker { return f.workers.Get().(*worker) }

// maxPooledWorker bounds the buffers a pooled worker keeps: a worker that
// rewrote an unusually large batch (up to maxBatchBytes, decompressed)
// goes to the collector instead of pinning that memory while idle.
const maxPooledWorker = 8 << 20

func (f *Filter) done(w *worker) {
	if w.retained() > maxPooledWorker {
		return
	}
	f.workers.Put(w)
}

// retained is the capacity of the buffers w keeps between calls.
func (w *worker) retained() int {
	return w.rw.Retained() + cap(w.seal.buf) + cap(w.open.buf)
}
