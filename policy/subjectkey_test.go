package policy

import (
	"net/netip"
	"reflect"
	"testing"
)

// TestSubjectKeyCoversPrincipal fails when Principal gains a field the
// ruleSubject cache key leaves out: two principals differing only there would
// share one cached ruleSubject, and one would get the other's decisions (as a
// virtual cluster's did before its name was in the key).
func TestSubjectKeyCoversPrincipal(t *testing.T) {
	e := compilePolicy(t, `
policy:
  default: deny
  rules:
    - name: by-claim
      principals: ["Claim:groups=payments"]
      allow: [describe]
      topics: ["t"]
`)
	base := Principal{User: "u", ClientID: "c", Addr: netip.MustParseAddr("127.0.0.1"), Listener: "bootstrap",
		CN: "cn", VirtualCluster: "vc", Claims: map[string][]string{"groups": {"payments"}}}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		changed := base
		f := reflect.ValueOf(&changed).Elem().Field(i)
		switch v := f.Interface().(type) {
		case string:
			f.SetString(v + "-other")
		case netip.Addr:
			f.Set(reflect.ValueOf(netip.MustParseAddr("127.0.0.2")))
		case map[string][]string:
			f.Set(reflect.ValueOf(map[string][]string{"groups": {"ops"}}))
		default:
			t.Fatalf("Principal.%s: a field of type %T this test cannot vary; teach it, and subjectKey", typ.Field(i).Name, v)
		}
		if e.subjectKey(&base) == e.subjectKey(&changed) {
			t.Errorf("Principal.%s is not in subjectKey: principals differing in it share a cached ruleSubject", typ.Field(i).Name)
		}
	}
}
