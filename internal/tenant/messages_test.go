package tenant

import (
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// foreignTopic is a name outside every marker prefix, as another tenant's
// or the operator's topic is; foreignMessage names it as a real broker's
// CreateTopics collision does.
const (
	foreignTopic   = "team_b.orders"
	foreignMessage = "Topic 'T/x' collides with existing topic: " + foreignTopic
)

// messagesNotMapped are the response message fields a tenant receives as
// the upstream wrote them, by "Key path", with why.
func messagesNotMapped() map[string]string {
	streamed := "Produce v13+ responses stay streamed (no decode on the produce path): the broker's produce messages are about the partition written to, the tenant's own"
	return map[string]string{
		"Produce resp.Topics.Partitions.ErrorMessage":              streamed,
		"Produce resp.Topics.Partitions.ErrorRecords.ErrorMessage": streamed,
		"SASLAuthenticate resp.ErrorMessage":                       "the connection's own login, before any name is used; it names the user at most",
	}
}

// messageFields lists the paths of the error-message-like string fields of
// message type t: names ending in Message or Detail.
func messageFields(prefix string, t reflect.Type) []string {
	var out []string
	walkFieldTypes(prefix, t, func(p string, f reflect.StructField) bool {
		base := f.Type
		for base.Kind() == reflect.Pointer {
			base = base.Elem()
		}
		if base.Kind() == reflect.String && (strings.HasSuffix(f.Name, "Message") || strings.HasSuffix(f.Name, "Detail")) {
			out = append(out, p)
			return true
		}
		return false
	})
	return out
}

// setMessages sets every message field (messageFields) of v to msg.
func setMessages(v reflect.Value, msg string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			setMessages(v.Elem(), msg)
		}
	case reflect.Slice:
		for i := range v.Len() {
			setMessages(v.Index(i), msg)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Name == "UnknownTags" {
				continue
			}
			fv := v.Field(i)
			isMsg := strings.HasSuffix(f.Name, "Message") || strings.HasSuffix(f.Name, "Detail")
			switch {
			case isMsg && fv.Kind() == reflect.String:
				fv.SetString(msg)
			case isMsg && fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.String:
				s := msg
				fv.Set(reflect.ValueOf(&s))
			default:
				setMessages(fv, msg)
			}
		}
	}
}

// TestEveryErrorMessageIsMapped fills, for every key and version a
// tenant's client can get an answer to, every name with the tenant's and
// every error message with a collision message naming another tenant's
// topic, maps the response, and fails if that name is still in any
// message: a kmsg upgrade that adds a message field, or an entry that
// forgets one, cannot pass another tenant's names on. Keys with messages
// but no response mapping fail too, unless messagesNotMapped says why.
func TestEveryErrorMessageIsMapped(t *testing.T) {
	tbl := buildTable()
	reasons := messagesNotMapped()
	for key := int16(0); key <= kmsg.MaxKey; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil || tbl.isRefused(key) {
			continue
		}
		name := kmsg.NameForKey(key)
		fields := messageFields("resp", reflect.TypeOf(kmsg.ResponseForKey(key)))
		if len(fields) == 0 {
			continue
		}
		a := tbl.lookup(key)
		if a == nil && tbl.scopedFor(key) != nil {
			continue // answered by kproxy to tenants; the cluster operators read the cluster's messages
		}
		for v := int16(0); v <= req.MaxVersion(); v++ {
			m := New(markerNames, WithClusterID(markerClusterID))
			if a == nil || a.response == nil || m.ResponseNeed(key, v) == NeedNothing {
				for _, f := range fields {
					if reasons[name+" "+f] == "" {
						t.Errorf("%s v%d: %s reaches the tenant unmapped (map the response, or say in messagesNotMapped why not)", name, v, f)
					}
				}
				continue
			}
			checkMessagesMapped(t, m, a, name, v)
		}
	}
}

func checkMessagesMapped(t *testing.T, m *Mapper, a *api, name string, v int16) {
	t.Helper()
	filled := kmsg.ResponseForKey(a.key)
	filled.SetVersion(v)
	fillMessage("resp", reflect.ValueOf(filled), func(path string, kind nameKind, f reflect.Value) {
		s := "n" + path
		switch kind {
		case kindTopic, kindResource:
			s = markerNames.Topic + s
		case kindTopicRegex:
			s = markerNames.Topic + "n.*"
		case kindGroup:
			s = markerNames.Group + s
		case kindTxnID:
			s = markerNames.TransactionalID + s
		}
		setName(f, s, m.ids.disguise(markerID(path)))
	})
	setMessages(reflect.ValueOf(filled), foreignMessage)
	resp := kmsg.ResponseForKey(a.key)
	resp.SetVersion(v)
	if err := resp.ReadFrom(filled.AppendTo(nil)); err != nil {
		t.Fatalf("%s v%d response: decode own encoding: %v", name, v, err)
	}
	sent := kmsg.RequestForKey(a.key)
	sent.SetVersion(v)
	fillMessage("req", reflect.ValueOf(sent), func(path string, _ nameKind, f reflect.Value) { setName(f, "n"+path, markerID(path)) })
	if err := m.MapResponse(sent, resp); err != nil {
		t.Fatalf("%s v%d response: %v", name, v, err)
	}
	var leaked []string
	collectMessages(reflect.ValueOf(resp), "resp", func(path, msg string) {
		if strings.Contains(msg, foreignTopic) {
			leaked = append(leaked, path)
		}
	})
	if len(leaked) > 0 {
		t.Errorf("%s v%d: another tenant's topic reaches the tenant in %v", name, v, leaked)
	}
}

// collectMessages calls f with each message field's path and value.
func collectMessages(v reflect.Value, path string, f func(path, msg string)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			collectMessages(v.Elem(), path, f)
		}
	case reflect.Slice:
		for i := range v.Len() {
			collectMessages(v.Index(i), path, f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if !sf.IsExported() || sf.Name == "UnknownTags" {
				continue
			}
			fv := v.Field(i)
			p := path + "." + sf.Name
			isMsg := strings.HasSuffix(sf.Name, "Message") || strings.HasSuffix(sf.Name, "Detail")
			switch {
			case isMsg && fv.Kind() == reflect.String:
				f(p, fv.String())
			case isMsg && fv.Kind() == reflect.Pointer && !fv.IsNil() && fv.Elem().Kind() == reflect.String:
				f(p, fv.Elem().String())
			default:
				collectMessages(fv, p, f)
			}
		}
	}
}

// The finding's case: acme-x creates a name that collides with a topic
// outside its prefix; the broker's message names that topic, and the
// tenant must not see it. Its own names come back unprefixed.
func TestDownMessage(t *testing.T) {
	m := New(Names{Topic: "acme_x.", Group: "acme_x.", TransactionalID: "acme_x."})
	for _, tc := range []struct{ in, want string }{
		{"Topic 'acme_x.orders' collides with existing topic: acme_x_orders", msgWithheld},
		{"Topic 'acme_x.orders.v1' already exists.", "Topic 'orders.v1' already exists."},
		{"Replication factor: 3 larger than available brokers: 1.", "Replication factor: 3 larger than available brokers: 1."},
		{"Unknown topic __consumer_offsets", msgWithheld},
		{"Invalid value 5 for configuration min.insync.replicas: too big", msgWithheld},
		{"Group acme_x.g1 is not empty; xacme_x.other is", msgWithheld},
		{"Group acme_x.g1 is not empty.", "Group g1 is not empty."},
	} {
		got := tc.in
		m.DownMessage(&got)
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}
