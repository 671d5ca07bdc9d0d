package topicids

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// resolverCluster is a kfake cluster with topic "known" that counts the
// Metadata requests naming a topic by id, running onByID for each, and a
// client to it.
func resolverCluster(t *testing.T, onByID func()) (*kgo.Client, [16]byte, *atomic.Int64) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "known"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	var byID atomic.Int64
	c.ControlKey(int16(kmsg.Metadata), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, rt := range req.(*kmsg.MetadataRequest).Topics {
			if rt.TopicID != ([16]byte{}) {
				byID.Add(1)
				onByID()
			}
		}
		return nil, nil, false
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	topics, err := kadm.NewClient(cl).ListTopics(context.Background(), "known")
	if err != nil || topics["known"].Err != nil {
		t.Fatalf("list topics: %v %+v", err, topics)
	}
	return cl, topics["known"].ID, &byID
}

// Many requests waiting for the same unknown id cost one upstream
// Metadata request, and the name is then known without asking.
func TestTopicResolverSingleFlight(t *testing.T) {
	cl, id, byID := resolverCluster(t, func() { time.Sleep(50 * time.Millisecond) }) // long enough for the waiters to pile up
	var ids Map
	r := NewResolver(cl, &ids)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if name, ok := r.Name(context.Background(), id); !ok || name != "known" {
				t.Errorf("resolved %x to %q, %v; want known", id, name, ok)
			}
		}()
	}
	wg.Wait()
	if n := byID.Load(); n != 1 {
		t.Fatalf("%d upstream Metadata requests for one id asked 20 times at once, want 1", n)
	}
	if name, ok := r.Name(context.Background(), id); !ok || name != "known" || byID.Load() != 1 {
		t.Fatalf("second resolution: %q %v after %d requests; want the cached name", name, ok, byID.Load())
	}
}

// An id the cluster does not know is remembered as unknown for a while,
// then asked about again.
func TestTopicResolverRemembersUnknown(t *testing.T) {
	cl, _, byID := resolverCluster(t, func() {})
	var ids Map
	r := NewResolver(cl, &ids)
	now := time.Now()
	r.now = func() time.Time { return now }
	madeUp := [16]byte{1, 2, 3}
	for range 3 {
		if _, ok := r.Name(context.Background(), madeUp); ok {
			t.Fatal("a made-up id resolved")
		}
	}
	if n := byID.Load(); n != 1 {
		t.Fatalf("%d upstream requests for an unknown id asked 3 times within %s, want 1", n, unknownFor)
	}
	now = now.Add(unknownFor + time.Second)
	r.Name(context.Background(), madeUp)
	if n := byID.Load(); n != 2 {
		t.Fatalf("%d upstream requests after %s, want the id asked about again", n, unknownFor)
	}
}

// A cluster that cannot be reached leaves the id unknown: the client gets
// UNKNOWN_TOPIC_ID, as without a resolver, within the resolve timeout.
func TestTopicResolverUnreachable(t *testing.T) {
	cl, err := kgo.NewClient(kgo.SeedBrokers("127.0.0.1:1"), kgo.RequestRetries(0), kgo.DialTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var ids Map
	start := time.Now()
	if _, ok := NewResolver(cl, &ids).Name(context.Background(), [16]byte{9}); ok {
		t.Fatal("resolved an id with no cluster to ask")
	}
	if took := time.Since(start); took > resolveTimeout+time.Second {
		t.Fatalf("gave up after %s, want within %s", took, resolveTimeout)
	}
}

// While maxResolving ids are being resolved, another id is not: it is
// answered unknown at once instead of adding to the upstream's load.
func TestTopicResolverBoundsConcurrency(t *testing.T) {
	release := make(chan struct{})
	cl, _, byID := resolverCluster(t, func() { <-release })
	var ids Map
	r := NewResolver(cl, &ids)
	var wg sync.WaitGroup
	for i := range maxResolving {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Name(context.Background(), [16]byte{0xaa, byte(i)})
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r.mu.Lock()
		n := len(r.inflight)
		r.mu.Unlock()
		if n == maxResolving {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d resolutions in flight, want %d", n, maxResolving)
		}
	}
	start := time.Now()
	if _, ok := r.Name(context.Background(), [16]byte{0xbb}); ok {
		t.Fatal("an id resolved while the resolver was full")
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("an id past the bound waited %s, want an answer at once", took)
	}
	close(release)
	wg.Wait()
	if n := byID.Load(); n > maxResolving {
		t.Fatalf("%d upstream requests, want at most %d", n, maxResolving)
	}
}
