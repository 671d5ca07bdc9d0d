package kms

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kproxy/kproxy/internal/errclass"
)

// MaxWrappedSize is the largest wrapped DEK Unwrap sends to the KMS (AWS
// KMS ciphertext blobs are at most 6144 bytes): a record cannot make the
// proxy hold or send more.
const MaxWrappedSize = 6144

// unwrapCache is a bounded LRU of unwrapped DEKs keyed by their wrapped
// blob, with the KMS calls under way so a blob is unwrapped once however
// many fetches need it at the same time.
type unwrapCache struct {
	provider Provider
	max      int
	ttl      time.Duration

	mu      sync.Mutex
	entries map[string]*list.Element // of *unwrapped
	order   *list.List               // most recently used first
	flights map[string]*flight
}

// unwrapped is a cache entry: a DEK, or the KMS's lasting refusal.
type unwrapped struct {
	wrapped string
	dek     *DEK
	err     error
	expires time.Time
}

func newUnwrapCache(p Provider, max int, ttl time.Duration) *unwrapCache {
	return &unwrapCache{provider: p, max: max, ttl: ttl,
		entries: map[string]*list.Element{}, order: list.New(), flights: map[string]*flight{}}
}

// get returns wrapped's DEK. A hit allocates nothing.
func (c *unwrapCache) get(ctx context.Context, wrapped []byte) (*DEK, error) {
	if len(wrapped) == 0 || len(wrapped) > MaxWrappedSize {
		return nil, errclass.Mark(ErrRejected, fmt.Errorf("wrapped data key of %d bytes: must be between 1 and %d", len(wrapped), MaxWrappedSize))
	}
	c.mu.Lock()
	if e, ok := c.entries[string(wrapped)]; ok {
		u := e.Value.(*unwrapped)
		if time.Now().Before(u.expires) {
			c.order.MoveToFront(e)
			c.mu.Unlock()
			return u.dek, u.err
		}
		c.remove(e)
	}
	f, ok := c.flights[string(wrapped)]
	if !ok {
		f = newFlight()
		key := string(wrapped)
		c.flights[key] = f
		go c.decrypt(context.WithoutCancel(ctx), key, f)
	}
	c.mu.Unlock()
	return f.wait(ctx)
}

// decrypt unwraps key with the KMS and caches the DEK, or the refusal when
// asking again would not help.
func (c *unwrapCache) decrypt(ctx context.Context, key string, f *flight) {
	plaintext, err := c.provider.Decrypt(ctx, []byte(key))
	if err == nil {
		// KeyID is not known from Decrypt's answer here: the blob names it.
		f.dek, err = newDEK(plaintext, []byte(key), "")
	}
	f.err = err
	c.mu.Lock()
	delete(c.flights, key)
	switch {
	case err == nil:
		c.insert(&unwrapped{wrapped: key, dek: f.dek, expires: time.Now().Add(c.ttl)})
	case !errors.Is(err, ErrRetriable):
		c.insert(&unwrapped{wrapped: key, err: err, expires: time.Now().Add(min(c.ttl, rejectedTTL))})
	}
	c.mu.Unlock()
	close(f.done)
}

// add caches a DEK this proxy generated.
func (c *unwrapCache) add(dek *DEK) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.insert(&unwrapped{wrapped: string(dek.Wrapped), dek: dek, expires: time.Now().Add(c.ttl)})
}

// insert adds u, evicting the least recently used entries past max.
// Called with mu held.
func (c *unwrapCache) insert(u *unwrapped) {
	if e, ok := c.entries[u.wrapped]; ok {
		c.remove(e)
	}
	c.entries[u.wrapped] = c.order.PushFront(u)
	for c.order.Len() > c.max {
		c.remove(c.order.Back())
	}
}

func (c *unwrapCache) remove(e *list.Element) {
	delete(c.entries, e.Value.(*unwrapped).wrapped)
	c.order.Remove(e)
}
