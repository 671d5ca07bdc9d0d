package policy

import (
	"testing"

	"github.com/kproxy/kproxy/filter"
)

// ConnMatcher matches a connection's principal as rules do; no entries
// match no one (a virtual cluster without cluster_operators has none).
func TestConnMatcher(t *testing.T) {
	ops, err := ConnMatcher([]string{"User:ops", "cn:platform"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		conn filter.Conn
		want bool
	}{
		{filter.Conn{User: "ops"}, true},
		{filter.Conn{User: "alice", CertCN: "platform"}, true},
		{filter.Conn{User: "alice"}, false},
		{filter.Conn{}, false},
	} {
		if got := ops(&tc.conn); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.conn, got, tc.want)
		}
	}
	none, err := ConnMatcher(nil)
	if err != nil || none(&filter.Conn{User: "ops"}) {
		t.Errorf("an empty list matched: %v", err)
	}
	if _, err := ConnMatcher([]string{"ops"}); err == nil {
		t.Error("a malformed principal compiled")
	}
}
