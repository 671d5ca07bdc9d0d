package tenant

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// api is the name mapping of one API key. Write entries as keyed literals:
// the core may add fields.
type api struct {
	key int16
	// request rewrites req in place to the upstream's names; req is the
	// decoded request after every filter. It returns whether the response
	// to this request must be mapped even where responseStreamed says it
	// may stay streamed (it disguised an id the response echoes). nil:
	// requests of key carry no name and are not decoded for the mapper.
	request func(ctx context.Context, m *Mapper, req kmsg.Request) (mapResponse bool, err error)
	// response rewrites resp in place to the tenant's names and removes
	// what is not the tenant's. req is the request as sent upstream
	// (already mapped), nil when it was mapped raw (rawRequest). nil:
	// responses of key stay as they are.
	response func(m *Mapper, req kmsg.Request, resp kmsg.Response) error
	// responseStreamed, when set, reports versions whose responses need no
	// mapping unless request said so (they carry only ids the request
	// checked): they stay streamed.
	responseStreamed func(version int16) bool
	// rawRequest, when set, maps the request body of the versions
	// rawRequestFor accepts without decoding it, appending the mapped body
	// to dst, or returning nil when the body needs no change; mapResponse
	// as for request.
	rawRequest    func(ctx context.Context, m *Mapper, version int16, body, dst []byte) (out []byte, mapResponse bool, err error)
	rawRequestFor func(version int16) bool
	// rawResponse, when set, maps the response body of the versions
	// rawResponseFor accepts without decoding it, appending to dst (nil:
	// no change).
	rawResponse    func(m *Mapper, version int16, body, dst []byte) ([]byte, error)
	rawResponseFor func(version int16) bool
	// fields lists the name-bearing field paths this entry handles, for the
	// completeness test: "req." or "resp." then the Go field path from the
	// message, slices implicit, e.g. "req.Topics.Topic",
	// "resp.Topics.Partitions.ErrorMessage".
	fields []string
}

// refusedKeys are the keys whose messages carry names but which no
// tenant's client has business sending (broker-to-broker and controller
// APIs): the Mapper refuses them, closing the connection, rather than
// forward names it does not map. The completeness test accepts a key
// listed here as handled.
func refusedKeys() []int16 {
	return []int16{
		int16(kmsg.LeaderAndISR), int16(kmsg.StopReplica), int16(kmsg.UpdateMetadata),
		int16(kmsg.ControlledShutdown), int16(kmsg.WriteTxnMarkers), int16(kmsg.AlterReplicaLogDirs),
		int16(kmsg.Vote), int16(kmsg.BeginQuorumEpoch), int16(kmsg.EndQuorumEpoch),
		int16(kmsg.DescribeQuorum), int16(kmsg.AlterPartition), int16(kmsg.FetchSnapshot),
		int16(kmsg.AssignReplicasToDirs), int16(kmsg.BrokerRegistration), int16(kmsg.BrokerHeartbeat),
		int16(kmsg.ControllerRegistration), int16(kmsg.AddRaftVoter), int16(kmsg.RemoveRaftVoter),
		int16(kmsg.UpdateRaftVoter), int16(kmsg.InitializeShareGroupState), int16(kmsg.ReadShareGroupState),
		int16(kmsg.WriteShareGroupState), int16(kmsg.DeleteShareGroupState),
		int16(kmsg.ReadShareGroupStateSummary),
		// Broker-to-controller: a client never sends them (Kafka closes a
		// client connection that does), and Envelope wraps a request
		// under a principal of the sender's choosing.
		int16(kmsg.Envelope), int16(kmsg.AllocateProducerIDs), int16(kmsg.UnregisterController),
	}
}

// apis is the table: one entry per API key that carries a name.
func apis() []api {
	return append(topicAPIs(), groupAPIs()...)
}

// table is apis indexed by key.
type table struct {
	byKey   []*api
	refused []bool
	scoped  []*scopedAPI
}

func buildTable() table {
	t := table{byKey: make([]*api, maxKey+1), refused: make([]bool, maxKey+1), scoped: make([]*scopedAPI, maxKey+1)}
	for _, a := range apis() {
		if a.key >= 0 && int(a.key) <= maxKey {
			a := a
			t.byKey[a.key] = &a
		}
	}
	for _, k := range refusedKeys() {
		t.refused[k] = true
	}
	for _, s := range clusterScopedAPIs() {
		s := s
		t.scoped[s.key] = &s
	}
	return t
}

// maxKey bounds the keys the table indexes (kmsg knows fewer).
const maxKey = 127

func (t table) lookup(key int16) *api {
	if key < 0 || int(key) >= len(t.byKey) {
		return nil
	}
	return t.byKey[key]
}

// scopedFor is the cluster-scoped entry of key, nil for other keys.
func (t table) scopedFor(key int16) *scopedAPI {
	if key < 0 || int(key) >= len(t.scoped) {
		return nil
	}
	return t.scoped[key]
}

func (t table) isRefused(key int16) bool {
	return key >= 0 && int(key) < len(t.refused) && t.refused[key]
}

// Answer, returned by a request function, makes the engine answer the
// client with Response (at the request's version) instead of forwarding
// the request: for requests the tenant may never make (a cluster ACL, say).
type Answer struct{ Response kmsg.Response }

func (a *Answer) Error() string { return "tenant: answered by kproxy" }

// AsAnswer reports the Answer err carries, if any.
func AsAnswer(err error) (*Answer, bool) {
	var a *Answer
	ok := errors.As(err, &a)
	return a, ok
}
