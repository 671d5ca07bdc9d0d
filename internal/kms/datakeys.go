package kms

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kproxy/kproxy/internal/errclass"
)

// DataKeys hands out DEKs for encryption (Reserve) and unwraps the DEKs
// records carry (Unwrap). Per KEK one active DEK is shared by every
// producer until either bound of DataKeysConfig is reached; a new one is
// then fetched by a single KMS call that concurrent callers wait for. KMS
// calls therefore follow the number of KEKs and the bounds, not the record
// rate. Safe for concurrent use.
type DataKeys struct {
	provider Provider
	cfg      DataKeysConfig
	// slots by key name: read without a lock on every record, replaced
	// whole (copy on write) when a key name is added or retired.
	slots     atomic.Pointer[map[string]*slot]
	slotsMu   sync.Mutex // serialises writers of slots
	unwrapped *unwrapCache
}

// NewDataKeys is the DEK cache in front of provider.
func NewDataKeys(provider Provider, cfg DataKeysConfig) (*DataKeys, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	d := &DataKeys{provider: provider, cfg: cfg, unwrapped: newUnwrapCache(provider, cfg.UnwrappedSize, cfg.UnwrappedTTL)}
	d.slots.Store(&map[string]*slot{})
	return d, nil
}

// Lease is n records' share of a DEK: Reserve counted them against the
// DEK's bound. Their indices First..First+n-1 are unique within the DEK
// (a source of unique nonces).
type Lease struct {
	DEK   *DEK
	First int64
}

// Reserve returns the active DEK of KEK keyID for n records (one batch),
// fetching a new DEK when there is none or the current one would pass a
// bound with them. n must not exceed MaxRecords.
func (d *DataKeys) Reserve(ctx context.Context, keyID string, n int) (Lease, error) {
	if n < 1 || int64(n) > d.cfg.MaxRecords {
		return Lease{}, errclass.Mark(ErrRejected, fmt.Errorf("reserve %d records of a data key: must be between 1 and dek.max_records (%d)", n, d.cfg.MaxRecords))
	}
	s := d.slot(keyID)
	for {
		cur := s.active.Load()
		if cur != nil {
			if lease, ok := cur.take(int64(n), d.cfg.MaxRecords, time.Now()); ok {
				return lease, nil
			}
		}
		if err := d.replace(ctx, s, keyID, cur); err != nil {
			return Lease{}, err
		}
	}
}

// Retire drops the active DEK of keyID: the next Reserve fetches a new
// one. Records already encrypted stay readable.
func (d *DataKeys) Retire(keyID string) {
	d.slotsMu.Lock()
	defer d.slotsMu.Unlock()
	old := *d.slots.Load()
	if _, ok := old[keyID]; !ok {
		return
	}
	next := make(map[string]*slot, len(old))
	for k, s := range old {
		if k != keyID {
			next[k] = s
		}
	}
	d.slots.Store(&next)
}

// Unwrap returns the DEK of a wrapped blob a record carries, from the
// cache or with one KMS call that concurrent callers share.
func (d *DataKeys) Unwrap(ctx context.Context, wrapped []byte) (*DEK, error) {
	return d.unwrapped.get(ctx, wrapped)
}

// slot is one KEK's active DEK.
type slot struct {
	active atomic.Pointer[activeDEK]
	mu     sync.Mutex
	fetch  *flight // the KMS call under way, under mu
}

// activeDEK is a DEK with the records it encrypted so far.
type activeDEK struct {
	dek     *DEK
	expires time.Time
	used    atomic.Int64
}

// take counts n more records if the DEK stays within both bounds. Once it
// fails the DEK is spent for good: used only grows.
func (a *activeDEK) take(n, maxRecords int64, now time.Time) (Lease, bool) {
	if !now.Before(a.expires) {
		return Lease{}, false
	}
	end := a.used.Add(n)
	if end > maxRecords {
		return Lease{}, false
	}
	return Lease{DEK: a.dek, First: end - n}, true
}

// slot returns keyID's slot, adding it on first use.
func (d *DataKeys) slot(keyID string) *slot {
	if s, ok := (*d.slots.Load())[keyID]; ok {
		return s
	}
	d.slotsMu.Lock()
	defer d.slotsMu.Unlock()
	old := *d.slots.Load()
	if s, ok := old[keyID]; ok {
		return s
	}
	next := make(map[string]*slot, len(old)+1)
	for k, s := range old {
		next[k] = s
	}
	s := &slot{}
	next[keyID] = s
	d.slots.Store(&next)
	return s
}

// replace makes sure s holds a DEK newer than spent: it joins the fetch
// under way or starts one, and waits for it.
func (d *DataKeys) replace(ctx context.Context, s *slot, keyID string, spent *activeDEK) error {
	s.mu.Lock()
	if s.active.Load() != spent { // another caller replaced it meanwhile
		s.mu.Unlock()
		return nil
	}
	f := s.fetch
	if f == nil {
		f = newFlight()
		s.fetch = f
		// The call outlives a caller that gives up: the others wait for it.
		go d.generate(context.WithoutCancel(ctx), s, keyID, f)
	}
	s.mu.Unlock()
	_, err := f.wait(ctx)
	return err
}

// generate fetches a new DEK for s and lands it.
func (d *DataKeys) generate(ctx context.Context, s *slot, keyID string, f *flight) {
	dk, err := d.provider.GenerateDataKey(ctx, keyID)
	if err == nil {
		f.dek, err = newDEK(dk.Plaintext, dk.Wrapped, dk.KeyID)
	}
	f.err = err
	s.mu.Lock()
	if err == nil {
		a := &activeDEK{dek: f.dek, expires: time.Now().Add(d.cfg.MaxAge)}
		s.active.Store(a)
		d.unwrapped.add(f.dek) // this proxy's consumers need no Decrypt call for it
	}
	s.fetch = nil
	s.mu.Unlock()
	close(f.done)
}
