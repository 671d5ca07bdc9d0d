package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func versionsResp(version, metadataMax int16) *kmsg.ApiVersionsResponse {
	r := kmsg.NewPtrApiVersionsResponse()
	r.SetVersion(version)
	r.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 3, MaxVersion: metadataMax}}
	return r
}

// TestAPIVersionsCacheFetchesOnceForConcurrentClients: many clients of a
// node kproxy knows nothing of cost one fetch; a failed fetch is not
// retried for apiVersionsRetry, however many clients ask.
func TestAPIVersionsCacheFetchesOnceForConcurrentClients(t *testing.T) {
	c := newAPIVersionsCache(context.Background())
	var fetches atomic.Int32
	release := make(chan struct{})
	fetch := func(context.Context) (*kmsg.ApiVersionsResponse, error) {
		fetches.Add(1)
		<-release
		return versionsResp(3, 12), nil
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.get(context.Background(), 1, fetch)
			if err != nil || resp.ApiKeys[0].MaxVersion != 12 {
				t.Errorf("get: %v %v", resp, err)
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	if n := fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for 50 concurrent clients", n)
	}

	now := time.Now()
	c.now = func() time.Time { return now }
	failing := func(context.Context) (*kmsg.ApiVersionsResponse, error) {
		fetches.Add(1)
		return nil, errors.New("node down")
	}
	fetches.Store(0)
	for range 20 {
		if _, err := c.get(context.Background(), 2, failing); err == nil {
			t.Fatal("get succeeded with a failing fetch")
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Fatalf("%d fetches within the retry period", n)
	}
	now = now.Add(apiVersionsRetry)
	c.get(context.Background(), 2, failing)
	if n := fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after the retry period, want 2", n)
	}
}

// TestAPIVersionsCacheRefresh: an answer older than apiVersionsMaxAge is
// refreshed by one upstream connection at a time, and a relayed answer at
// a lower version (without the newer fields) replaces a fresh one only
// once it is stale; a broker upgrade shows within apiVersionsMaxAge.
func TestAPIVersionsCacheRefresh(t *testing.T) {
	c := newAPIVersionsCache(context.Background())
	now := time.Now()
	c.now = func() time.Time { return now }
	if !c.claimRefresh(0) {
		t.Fatal("an empty entry needs no refresh")
	}
	if c.claimRefresh(0) {
		t.Fatal("two refreshes at once")
	}
	c.store(0, versionsResp(3, 12))
	c.refreshDone(0)
	if c.claimRefresh(0) {
		t.Fatal("a fresh entry claimed for refresh")
	}
	c.store(0, versionsResp(0, 11)) // a v0 client's relayed answer
	got, _ := c.get(context.Background(), 0, nil)
	if got.Version != 3 || got.ApiKeys[0].MaxVersion != 12 {
		t.Fatalf("a lower version replaced a fresh answer: %+v", got)
	}
	now = now.Add(apiVersionsMaxAge)
	if !c.claimRefresh(0) {
		t.Fatal("a stale entry is not refreshed")
	}
	c.store(0, versionsResp(3, 13)) // the broker was upgraded
	c.refreshDone(0)
	got, _ = c.get(context.Background(), 0, nil)
	if got.ApiKeys[0].MaxVersion != 13 {
		t.Fatalf("upgrade not picked up: %+v", got)
	}
	c.store(0, &kmsg.ApiVersionsResponse{Version: 3, ErrorCode: 35})
	if got, _ = c.get(context.Background(), 0, nil); got.ErrorCode != 0 {
		t.Fatal("an error answer was cached")
	}
}

// TestValidSoftwareField follows Kafka's pattern for ApiVersions v3's
// client software name and version.
func TestValidSoftwareField(t *testing.T) {
	for s, want := range map[string]bool{
		"kgo": true, "1.0.0-rc.1": true, "a": true, "librdkafka": true, "v2.3.0": true,
		"": false, "-a": false, "a-": false, "a.": false, "not valid": false, "a_b": false, "é": false,
	} {
		if got := validSoftwareField(s); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}
