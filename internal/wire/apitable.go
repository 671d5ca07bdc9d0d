package wire

import (
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// API is one row of the API table: everything kproxy knows about one Kafka
// API key. A feature that needs to know something per API reads it here
// instead of switching on keys of its own, so that adding an API, or the
// broker endpoints of one, is one row.
type API struct {
	Key  int16
	Name string

	// NewRequest and NewResponse return an empty message of this API.
	// Every decode, and the shapes that bound its memory, go through them.
	NewRequest  func() kmsg.Request
	NewResponse func() kmsg.Response

	// Endpoints lists the places in a response that hold broker endpoints
	// (node id, host, port): the address rewriter rewrites them, the test
	// sniffer reads them. Empty for an API whose responses carry none.
	Endpoints []EndpointList
	// EndpointsSince is the first version whose encoding can carry them;
	// responses below it need no look at all.
	EndpointsSince int16
	// StripEndpoints, when set, is what kproxy does instead of rewriting
	// the endpoints: it removes them from resp (the ones no proxy address
	// can stand for). It fails for a response of another type.
	StripEndpoints func(resp kmsg.Response) error

	// WalkToTags, when set, moves s from the start of a response body to
	// its top-level tag section (where KIP-951 puts leader endpoints)
	// without holding the body, so such a response can stay streamed.
	WalkToTags func(version int16, s Stepper) error
	// ResponseRecords is true when responses carry record batches: holding
	// one in memory costs a copy of the data, so it is kept streamed
	// whenever a walk allows.
	ResponseRecords bool
}

// HasEndpoints reports whether responses of a carry broker endpoints.
func (a API) HasEndpoints() bool { return len(a.Endpoints) > 0 }

// APITable is the API table: one row per API key. It is immutable; With
// derives a copy with rows added or replaced.
type APITable struct {
	apis     []API // by key; a zero API (nil NewRequest) where no API is known
	versions []apiVersions
	shapes   []func() keyShapes // learned on first use, per key
}

// apiVersions is the compact per-key part the header parser consults for
// every frame.
type apiVersions struct {
	known         bool
	maxVersion    int16
	flexibleSince int16 // first flexible version, or -1 if never flexible
}

// APIs returns the table of every API key kmsg knows, with the broker
// endpoints and streamed walks kproxy knows about. It is shared and never
// changes.
func APIs() *APITable { return builtinAPIs }

// builtinAPIs is built once, in init, as the header parser needs it for
// every frame: a plain pointer keeps that lookup as cheap as a constant's.
// (Its rows refer to the walks, which consult the table themselves, so an
// initializer may not build it.) Shapes, the costly part, are learned per
// key on first use.
var builtinAPIs *APITable

func init() {
	t, err := (&APITable{}).With(kmsgAPIs()...)
	if err != nil {
		panic(fmt.Sprintf("wire: the built-in API table is invalid: %v", err))
	}
	builtinAPIs = t
}

// kmsgAPIs is a row for every key kmsg has a message for, with the
// endpoint and walk knowledge of endpointRows merged in.
func kmsgAPIs() []API {
	extra := map[int16]API{}
	for _, a := range endpointRows() {
		extra[a.Key] = a
	}
	var rows []API
	for key := int16(0); kmsg.NameForKey(key) != "Unknown" || kmsg.RequestForKey(key) != nil; key++ {
		if kmsg.RequestForKey(key) == nil {
			continue // a name kmsg keeps for a retired key
		}
		a, ok := extra[key]
		if !ok {
			a = API{Key: key}
		}
		a.Name = kmsg.NameForKey(key)
		a.NewRequest = func() kmsg.Request { return kmsg.RequestForKey(key) }
		a.NewResponse = func() kmsg.Response { return kmsg.ResponseForKey(key) }
		rows = append(rows, a)
	}
	return rows
}

// With returns a copy of t with rows added, or replacing t's rows of the
// same key: for tests, and for an API kmsg does not know yet. A row needs
// a Key, a Name and both constructors, whose messages must have that key.
func (t *APITable) With(rows ...API) (*APITable, error) {
	n := len(t.apis)
	for _, a := range rows {
		if a.Key < 0 {
			return nil, fmt.Errorf("api table: row %q: negative key %d", a.Name, a.Key)
		}
		n = max(n, int(a.Key)+1)
	}
	c := &APITable{
		apis:     make([]API, n),
		versions: make([]apiVersions, n),
		shapes:   make([]func() keyShapes, n),
	}
	copy(c.apis, t.apis)
	copy(c.versions, t.versions)
	copy(c.shapes, t.shapes)
	for _, a := range rows {
		v, err := checkRow(a)
		if err != nil {
			return nil, fmt.Errorf("api table: %s (key %d): %w", a.Name, a.Key, err)
		}
		a.Endpoints = slices.Clone(a.Endpoints) // the caller's slice stays the caller's
		c.apis[a.Key], c.versions[a.Key] = a, v
		c.shapes[a.Key] = sync.OnceValue(func() keyShapes { return learnKeyShapes(a, v.maxVersion) })
	}
	return c, nil
}

// checkRow validates a row and learns its versions from its request.
func checkRow(a API) (apiVersions, error) {
	if a.Name == "" || a.NewRequest == nil || a.NewResponse == nil {
		return apiVersions{}, fmt.Errorf("a row needs a name and both constructors")
	}
	req, resp := a.NewRequest(), a.NewResponse()
	if req.Key() != a.Key || resp.Key() != a.Key {
		return apiVersions{}, fmt.Errorf("constructors make keys %d and %d", req.Key(), resp.Key())
	}
	for _, l := range a.Endpoints {
		if l.at == nil {
			return apiVersions{}, fmt.Errorf("endpoint list %q was not made by ListOf or OneOf", l.Field)
		}
	}
	v := apiVersions{known: true, maxVersion: req.MaxVersion(), flexibleSince: -1}
	for version := int16(0); version <= v.maxVersion; version++ {
		req.SetVersion(version)
		if req.IsFlexible() {
			v.flexibleSince = version
			break
		}
	}
	return v, nil
}

// API returns the row of key, and whether there is one. The row's
// Endpoints share the table's: read them, never change them.
func (t *APITable) API(key int16) (API, bool) {
	if !t.KnownAPI(key) {
		return API{}, false
	}
	return t.apis[key], true
}

// APIName is the name of key's row, or "Unknown".
func (t *APITable) APIName(key int16) string {
	if !t.KnownAPI(key) {
		return "Unknown"
	}
	return t.apis[key].Name
}

// EndpointKeys returns, in key order, every key whose responses carry
// broker endpoints. The slice is new on each call.
func (t *APITable) EndpointKeys() []int16 {
	var keys []int16
	for _, a := range t.apis {
		if a.HasEndpoints() {
			keys = append(keys, a.Key)
		}
	}
	return keys
}

// KnownAPI reports whether t has a row for key.
func (t *APITable) KnownAPI(key int16) bool {
	return key >= 0 && int(key) < len(t.versions) && t.versions[key].known
}

// MaxKey is the highest key t has room for; every known key is at most it.
func (t *APITable) MaxKey() int16 { return int16(len(t.versions) - 1) }

// MaxVersion is the highest version of key that t's row can decode, or -1.
func (t *APITable) MaxVersion(key int16) int16 {
	if !t.KnownAPI(key) {
		return -1
	}
	return t.versions[key].maxVersion
}

// IsFlexible reports whether version of key uses flexible (KIP-482)
// encoding. A version above the highest known is treated like that
// highest version: flexibility never goes away once introduced, and this
// is how a broker parses the header of an ApiVersions request newer than
// it understands (KIP-511).
func (t *APITable) IsFlexible(key, version int16) bool {
	if !t.KnownAPI(key) {
		return false
	}
	since := t.versions[key].flexibleSince
	return since >= 0 && version >= since
}
