package tenant

import (
	"bytes"
	"context"
	"crypto/sha256"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// markerNames are the prefixes the marker tests map with.
var markerNames = Names{Topic: "T/", Group: "G/", TransactionalID: "X/"}

const (
	markerClusterID   = "vc"
	upstreamClusterID = "up"
)

// notMapped are the name-bearing fields kproxy leaves as they are on
// purpose, by "Key path", with why.
func notMapped() map[string]string {
	return map[string]string{
		"Fetch req.ClusterID": "KIP-853 field of KRaft replica fetches; the broker checks it only for replicas, never for consumers",
	}
}

// TestEveryNameFieldIsHandled walks every request and response type kmsg
// knows and fails for each field holding a topic name, topic id, group id,
// transactional id, resource name or cluster id that no table entry maps,
// no refused key covers and notMapped does not name: a kmsg upgrade that
// adds one cannot slip through.
func TestEveryNameFieldIsHandled(t *testing.T) {
	tbl := buildTable()
	topicKeys := map[int16]bool{}
	for _, a := range topicAPIs() {
		topicKeys[a.key] = true
	}
	groupsStub := len(groupAPIs()) == 0
	reasons := notMapped()
	for key := int16(0); key <= kmsg.MaxKey; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil {
			continue
		}
		name := kmsg.NameForKey(key)
		fields := append(nameFields("req", reflect.TypeOf(req)), nameFields("resp", reflect.TypeOf(kmsg.ResponseForKey(key)))...)
		if len(fields) == 0 || tbl.isRefused(key) {
			continue
		}
		a := tbl.lookup(key)
		var missing []string
		for _, f := range fields {
			if a != nil && slices.Contains(a.fields, f.path) || reasons[name+" "+f.path] != "" {
				continue
			}
			missing = append(missing, f.path)
		}
		if len(missing) == 0 {
			continue
		}
		if groupsStub && !topicKeys[key] && ownedByGroups(fields) {
			t.Logf("%s: %v left to the group, transaction and ACL entries (groups_table.go is still the stub)", name, missing)
			continue
		}
		t.Errorf("%s: name-bearing fields no entry handles: %v (map them, refuse the key, or say in notMapped why not)", name, missing)
	}
	for _, a := range apis() {
		for _, p := range a.fields {
			if !fieldExists(p, reflect.TypeOf(kmsg.RequestForKey(a.key)), reflect.TypeOf(kmsg.ResponseForKey(a.key))) {
				t.Errorf("%s entry lists %q, which is no field of its messages", kmsg.NameForKey(a.key), p)
			}
		}
	}
}

// fieldExists reports whether path ("req." or "resp." then Go field
// names, slices and pointers implicit) names a field of the request type
// req or the response type resp: entries may list fields beyond the
// name-bearing ones (bytes that hold names, say).
func fieldExists(path string, req, resp reflect.Type) bool {
	parts := strings.Split(path, ".")
	t := req
	switch parts[0] {
	case "req":
	case "resp":
		t = resp
	default:
		return false
	}
	for _, name := range parts[1:] {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		f, ok := t.FieldByName(name)
		if !ok {
			return false
		}
		t = f.Type
	}
	return true
}

// ownedByGroups: a key with group, transactional id or resource fields is
// the group/transaction/ACL entries' (groupAPIs).
func ownedByGroups(fields []nameField) bool {
	for _, f := range fields {
		if f.kind == kindGroup || f.kind == kindTxnID || f.kind == kindResource {
			return true
		}
	}
	return false
}

// markerID is a made-up topic id per path, unknown to any Mapper.
func markerID(path string) [16]byte {
	sum := sha256.Sum256([]byte(path))
	return [16]byte(sum[:16])
}

// TestMappingChangesEveryField fills, for every entry and version, each
// name field an entry lists with a marker and checks the mapping really
// changed it: a request's names get the prefix (another tenant's id gets
// disguised), a response's lose it (a disguised id is the client's
// again), the cluster id is the virtual cluster's. Requests are mapped as
// a cluster operator's, so that cluster-scoped keys are mapped too. Where
// an entry maps raw too, the raw rewrite must produce exactly the bytes of
// the decoded one.
func TestMappingChangesEveryField(t *testing.T) {
	ctx := AsClusterOperator(context.Background()) // cluster-scoped keys are mapped for operators

	for _, a := range apis() {
		name := kmsg.NameForKey(a.key)
		for v := int16(0); v <= kmsg.RequestForKey(a.key).MaxVersion(); v++ {
			m := New(markerNames, WithClusterID(markerClusterID))
			var sent kmsg.Request // the request as mapped, for the response's mapping
			if a.request != nil || a.rawRequest != nil {
				sent = checkRequestMapping(t, ctx, m, a, name, v)
			}
			// ListConfigResources v0 lists client metrics resources only
			// (no type field): there is no tenant's name to map.
			listsClientMetrics := a.key == int16(kmsg.ListConfigResources) && v == 0
			if (a.response != nil || a.rawResponse != nil) && !listsClientMetrics {
				checkResponseMapping(t, m, a, name, v, sent)
			}
		}
	}
}

func checkRequestMapping(t *testing.T, ctx context.Context, m *Mapper, a api, name string, v int16) kmsg.Request {
	t.Helper()
	filled := kmsg.RequestForKey(a.key)
	filled.SetVersion(v)
	fillMessage("req", reflect.ValueOf(filled), func(path string, kind nameKind, f reflect.Value) {
		s := "n" + path
		if kind == kindClusterID {
			s = markerClusterID
		}
		setName(f, s, markerID(path))
	})
	body := filled.AppendTo(nil)
	req := kmsg.RequestForKey(a.key)
	req.SetVersion(v)
	if err := req.ReadFrom(body); err != nil {
		t.Fatalf("%s v%d request: decode own encoding: %v", name, v, err)
	}
	before := fieldValues("req", reflect.ValueOf(req))
	if _, err := m.MapRequest(ctx, req); err != nil {
		t.Fatalf("%s v%d request: %v", name, v, err)
	}
	checkEveryFieldChanged(t, a, name, v, "req.", before, fieldValues("req", reflect.ValueOf(req)))
	if a.rawRequest != nil && a.rawRequestFor(v) {
		raw, _, err := m.MapRawRequest(ctx, a.key, v, body, nil)
		checkRawMatchesDecoded(t, name+" request", v, body, raw, err, req)
	}
	return req
}

// checkEveryFieldChanged fails for each value of a handled field (those of
// a.fields under prefix, "req." or "resp.") that mapping left in place.
func checkEveryFieldChanged(t *testing.T, a api, name string, v int16, prefix string, before, after map[string][]string) {
	t.Helper()
	for _, path := range a.fields {
		if !strings.HasPrefix(path, prefix) {
			continue
		}
		for _, was := range before[path] {
			if slices.Contains(after[path], was) {
				t.Errorf("%s v%d: %s still %q after mapping", name, v, path, was)
			}
		}
	}
}

// checkRawMatchesDecoded fails unless the raw mapping of body (raw, nil
// for no change, and its err) gives the bytes of the decoded mapping.
func checkRawMatchesDecoded(t *testing.T, what string, v int16, body, raw []byte, err error, decoded interface{ AppendTo([]byte) []byte }) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s v%d raw: %v", what, v, err)
	}
	if raw == nil { // no change
		raw = body
	}
	if want := decoded.AppendTo(nil); !bytes.Equal(raw, want) {
		t.Errorf("%s v%d: raw mapping differs from the decoded one:\n raw %x\nwant %x", what, v, raw, want)
	}
}

// checkResponseMapping: sent is the request as mapped (nil for an entry
// mapping responses only: a filled, unmapped one stands in).
func checkResponseMapping(t *testing.T, m *Mapper, a api, name string, v int16, sent kmsg.Request) {
	t.Helper()
	want := map[string][]string{}
	filled := kmsg.ResponseForKey(a.key)
	filled.SetVersion(v)
	fillMessage("resp", reflect.ValueOf(filled), func(path string, kind nameKind, f reflect.Value) {
		s := "n" + path
		id := markerID(path)
		switch kind {
		case kindTopic, kindResource:
			s = markerNames.Topic + s
		case kindTopicRegex:
			up, err := upRegex(markerNames.Topic, s) // as the request sent it up
			if err != nil {
				t.Fatalf("%s: marker regex %q: %v", path, s, err)
			}
			s = up
		case kindGroup:
			s = markerNames.Group + s
		case kindTxnID:
			s = markerNames.TransactionalID + s
		case kindClusterID:
			s = upstreamClusterID
		case kindTopicID:
			id = m.ids.disguise(id) // what the upstream echoes for an id it was sent disguised
		}
		setName(f, s, id)
	})
	body := filled.AppendTo(nil)
	resp := kmsg.ResponseForKey(a.key)
	resp.SetVersion(v)
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("%s v%d response: decode own encoding: %v", name, v, err)
	}
	before := fieldValues("resp", reflect.ValueOf(resp))
	for path, vals := range before {
		want[path] = vals
	}
	if sent == nil {
		sent = kmsg.RequestForKey(a.key)
		sent.SetVersion(v)
		fillMessage("req", reflect.ValueOf(sent), func(path string, _ nameKind, f reflect.Value) { setName(f, "n"+path, markerID(path)) })
	}
	if err := m.MapResponse(sent, resp); err != nil {
		t.Fatalf("%s v%d response: %v", name, v, err)
	}
	after := fieldValues("resp", reflect.ValueOf(resp))
	checkEveryFieldChanged(t, a, name, v, "resp.", before, after)
	for _, path := range a.fields {
		if strings.HasPrefix(path, "resp.") && len(before[path]) > 0 && len(after[path]) == 0 {
			t.Errorf("%s v%d: %s removed by mapping, want it kept as the tenant's", name, v, path)
		}
	}
	if a.rawResponse != nil && a.rawResponseFor(v) {
		raw, err := m.MapRawResponse(a.key, v, body, nil)
		checkRawMatchesDecoded(t, name+" response", v, body, raw, err, resp)
	}
}
