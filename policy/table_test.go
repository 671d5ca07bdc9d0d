package policy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// TestTableCoversEveryAPIKey walks every API key kmsg knows and fails if
// the operation table has no row for it, or a row for a key kmsg does not
// know, or two rows for one key.
func TestTableCoversEveryAPIKey(t *testing.T) {
	rows := map[int16]int{}
	for _, e := range operationTable() {
		rows[int16(e.key)]++
	}
	for key := int16(0); key <= wire.MaxKnownKey()+5; key++ {
		known := kmsg.RequestForKey(key) != nil
		switch {
		case known && rows[key] == 0:
			t.Errorf("API key %d (%s) has no row in the operation table", key, kmsg.NameForKey(key))
		case !known && rows[key] > 0:
			t.Errorf("operation table has a row for key %d, which kmsg does not know", key)
		case rows[key] > 1:
			t.Errorf("API key %d (%s) has %d rows", key, kmsg.NameForKey(key), rows[key])
		}
	}
	for _, e := range operationTable() {
		if e.setup {
			if len(e.needs) != 0 || e.handle != nil {
				t.Errorf("%s: setup APIs are always allowed and have no handler", kmsg.NameForKey(int16(e.key)))
			}
			continue
		}
		if e.handle == nil || e.answer == "" {
			t.Errorf("%s: row without handler or answer", kmsg.NameForKey(int16(e.key)))
		}
	}
}

// TestRequestKeys: everything but ApiVersions and SASL is decoded when a
// policy is active.
func TestRequestKeys(t *testing.T) {
	enf := newTestEnforcer(t, "policy: {default: allow}", nil)
	got := map[int16]bool{}
	for _, k := range requestKeys(enf) {
		got[k] = true
	}
	for key := int16(0); key <= wire.MaxKnownKey(); key++ {
		if !protocol.KnownAPI(key) {
			continue
		}
		setup := key == wire.APIVersionsKey || key == wire.SASLHandshakeKey || key == wire.SASLAuthenticateKey
		if got[key] == setup {
			t.Errorf("handler registered for %s = %v, want %v", protocol.APIName(key), got[key], !setup)
		}
	}
}

// populate fills every list in v with one element and every string with
// "t", so that every resource a request can name is named.
func populate(v reflect.Value, depth int) {
	if depth > 6 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() && v.Type().Elem().Kind() != reflect.Uint8 {
			v.Set(reflect.New(v.Type().Elem()))
		}
		if !v.IsNil() {
			populate(v.Elem(), depth+1)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.IsExported() && f.Name != "UnknownTags" && f.Name != "Version" {
				populate(v.Field(i), depth+1)
			}
		}
	case reflect.String:
		v.SetString("t")
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes (records, assignments) stay empty
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		populate(v.Index(0), depth+1)
	}
}

// populated returns a request for key at version v that names a resource
// in every list the version has.
func populated(t *testing.T, key, v int16) kmsg.Request {
	t.Helper()
	req := kmsg.RequestForKey(key)
	populate(reflect.ValueOf(req), 0)
	req.SetVersion(v)
	// Round-trip through the wire so only what version v carries is left,
	// as the proxy would decode it.
	back := kmsg.RequestForKey(key)
	back.SetVersion(v)
	if err := back.ReadFrom(req.AppendTo(nil)); err != nil {
		t.Fatalf("%s v%d: re-read populated request: %v", protocol.APIName(key), v, err)
	}
	return back
}

// carriesCode reports whether any ErrorCode field in resp, at any depth,
// equals code.
func carriesCode(v reflect.Value, code int16) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && carriesCode(v.Elem(), code)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if f.Name == "ErrorCode" && v.Field(i).Kind() == reflect.Int16 && v.Field(i).Int() == int64(code) {
				return true
			}
			if f.IsExported() && carriesCode(v.Field(i), code) {
				return true
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			if carriesCode(v.Index(i), code) {
				return true
			}
		}
	}
	return false
}

// TestEveryAPIEveryVersionDenies runs every handler, for every version kmsg
// knows, on a request naming a resource everywhere it can, under a policy
// that allows nothing and one that allows everything. It fails if a
// handler asks for a pair its table row does not list, if an API that
// needs a permission goes upstream unchanged without one, if a local
// answer is at the wrong version or does not carry the denial, or if the
// connection is closed although the response had a place for the error.
func TestEveryAPIEveryVersionDenies(t *testing.T) {
	denyAll := newTestEnforcer(t, "policy: {default: deny}", nil)
	allowAll := newTestEnforcer(t, "policy: {default: allow}", nil)
	var forbidden []string
	for _, e := range operationTable() {
		if !e.setup {
			forbidden = append(forbidden, kmsg.NameForKey(int16(e.key)))
		}
	}
	forbidAll := newTestEnforcer(t, "policy: {default: allow, governance: [{name: none, forbidden_apis: ["+strings.Join(forbidden, ", ")+"]}]}", nil)
	conn := &filter.Conn{ID: 1, Listener: "bootstrap", ClientID: "c"}
	for _, e := range operationTable() {
		if e.setup {
			continue
		}
		key := int16(e.key)
		for v := int16(0); v <= kmsg.RequestForKey(key).MaxVersion(); v++ {
			name := protocol.APIName(key) + "/v" + itoa(int(v))
			if v == 0 {
				name = protocol.APIName(key) + "/v0"
			}
			req := populated(t, key, v)
			if got := filterRequest(allowAll, conn, req); got.Respond != nil || got.Close != nil || got.Modified {
				t.Errorf("%s: allowed request was not forwarded unchanged: %+v", name, got)
			}
			verdict := filterRequest(denyAll, conn, populated(t, key, v))
			checkDenied(t, name, &e, populated(t, key, v), verdict, -1)

			// forbidden_apis answers every part with POLICY_VIOLATION.
			verdict = filterRequest(forbidAll, conn, populated(t, key, v))
			checkDenied(t, name+"/forbidden", &e, populated(t, key, v), verdict, errPolicyViolation)
		}
	}
	for _, enf := range []*Enforcer{denyAll, allowAll, forbidAll} {
		if n := enf.tableMisses.Load(); n != 0 {
			t.Errorf("handlers asked %d questions their table rows do not list (see log)", n)
		}
	}
}

func checkDenied(t *testing.T, name string, e *apiEntry, req kmsg.Request, v filter.Verdict, code int16) {
	t.Helper()
	switch {
	case v.Close != nil:
		// Only when the response has no place for the error.
		resp := req.ResponseKind()
		hasTop := setTopLevelError(resp, &denial{code: 31})
		if hasTop && !strings.Contains(v.Close.Error(), "no error field") {
			t.Errorf("%s: closed (%v) although the response has a top-level error code", name, v.Close)
		}
	case v.Respond != nil:
		if v.Respond.Key() != req.Key() || v.Respond.GetVersion() != req.GetVersion() {
			t.Errorf("%s: answered with %s v%d", name, protocol.APIName(v.Respond.Key()), v.Respond.GetVersion())
		}
		back := kmsg.ResponseForKey(req.Key())
		back.SetVersion(req.GetVersion())
		if err := back.ReadFrom(v.Respond.AppendTo(nil)); err != nil {
			t.Errorf("%s: local answer does not decode: %v", name, err)
			return
		}
		want := code
		found := false
		if want < 0 {
			for _, c := range []int16{errTopicAuthorizationFailed, errGroupAuthorizationFailed, errClusterAuthorizationFailed,
				errTransactionalIDAuthorizationFailed, errUnknownTopicID} {
				found = found || carriesCode(reflect.ValueOf(back), c)
			}
		} else {
			found = carriesCode(reflect.ValueOf(back), want)
		}
		// DescribeLogDirs before v3 is answered, as by Kafka, with nothing.
		if !found && !(e.key == kmsg.DescribeLogDirs && req.GetVersion() < 3) {
			t.Errorf("%s: local answer carries no denial code: %+v", name, back)
		}
	case len(e.needs) == 0:
		// Nothing to deny (as Kafka) unless forbidden.
		if code >= 0 {
			t.Errorf("%s: forbidden API forwarded", name)
		}
	case v.OnResponse != nil:
		// Listings filter the answer; Metadata always goes upstream.
		if !v.Modified && !strings.Contains(e.answer, "hidden") {
			t.Errorf("%s: denied request forwarded unchanged with only a response hook", name)
		}
	default:
		t.Errorf("%s: denied request forwarded unchanged: %+v", name, v)
	}
}
