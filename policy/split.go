package policy

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// A split decides each resource a request lists on its own: denied ones
// are removed from the request and answered by the policy in the client's
// order; a request whose every resource is denied never reaches the
// upstream. One API's adapter is its listing: where its request and
// response list the resources (typed, as the allowed path reads them) and
// how a denied one is answered (built from kmsg's field names, since only
// denials need it).

// listing is one API's resources in its request (T) and response (RT),
// keyed by K.
type listing[K comparable, T, RT any, Resp kmsg.Response] struct {
	items     *[]T // the request's list
	key       func(*T) K
	respItems func(Resp) *[]RT
	respKey   func(*RT) K
	// denied is the policy's answer for a denied request item.
	denied func(*T, *denial) RT
}

// splitEach decides each item with decide and returns req's verdict. The
// common, allowed case allocates nothing.
func splitEach[K comparable, T, RT any, Resp kmsg.Response](c *reqCtx, req kmsg.Request, l listing[K, T, RT, Resp], decide func(*T) *denial) filter.Verdict {
	orig := *l.items
	var denials []*denial
	denied := 0
	for i := range orig {
		d := decide(&orig[i])
		if d == nil {
			continue
		}
		if denials == nil {
			denials = make([]*denial, len(orig))
		}
		denials[i] = d
		denied++
	}
	if denied == 0 {
		return filter.Verdict{}
	}
	keys := make([]K, len(orig))
	for i := range orig {
		keys[i] = l.key(&orig[i])
	}
	return l.verdict(c, req, orig, keys, denials, denied == len(orig))
}

// splitTopics decides each topic with check (topic ids kproxy cannot name
// are denied with UNKNOWN_TOPIC_ID) and returns req's verdict. A request
// that a denial of its own (whole: of its group or transactional id)
// refuses is answered with it in every topic and no id is looked up, as
// Kafka's authorizer decides that first: the answer is then the same
// whether an id names a topic or nothing, and such a request never
// reaches the cluster, even when it lists no topic.
func splitTopics[T, RT any, Resp kmsg.Response](c *reqCtx, req kmsg.Request, l listing[topicKey, T, RT, Resp], whole *denial, check func(name string) *denial) filter.Verdict {
	orig := *l.items
	if whole != nil {
		keys, denials := make([]topicKey, len(orig)), make([]*denial, len(orig))
		for i := range orig {
			keys[i], denials[i] = l.key(&orig[i]), whole
		}
		return l.verdict(c, req, orig, keys, denials, true)
	}
	keys, denials, denied := c.topicDenials(len(orig), func(i int) (string, [16]byte) {
		k := l.key(&orig[i])
		return k.name, k.id
	}, check)
	if denied == 0 {
		return filter.Verdict{}
	}
	return l.verdict(c, req, orig, keys, denials, denied == len(orig))
}

// verdict answers the denied items (denials[i] set) in the client's order
// and forwards the others, or answers req whole when allDenied.
func (l listing[K, T, RT, Resp]) verdict(c *reqCtx, req kmsg.Request, orig []T, keys []K, denials []*denial, allDenied bool) filter.Verdict {
	strip := func() { *l.items = keepAllowed(orig, denials) }
	return c.split(req, allDenied, strip, filter.Then(func(resp Resp) error {
		list := l.respItems(resp)
		*list = mergeInOrder(*list, l.respKey, keys, func(i int) (RT, bool) {
			d, ok := denialAt(denials, i)
			if !ok {
				var none RT
				return none, false
			}
			return l.denied(&orig[i], d), true
		})
		return nil
	}))
}

// topicListing is the listing of a topic-partition API: its request's
// topics, keyed by key; the response's, keyed alike; and a denied topic
// answered in every partition it lists (topicAnswering).
func topicListing[T, RT any, Resp kmsg.Response](items *[]T, key func(*T) topicKey, respItems func(Resp) *[]RT) listing[topicKey, T, RT, Resp] {
	return listing[topicKey, T, RT, Resp]{items: items, key: key, respItems: respItems, respKey: respTopicKey[T, RT], denied: topicAnswering[T, RT]}
}

// respTopicKey is the key of a response topic: its name, and its id where
// the request topics have one too (as their key does).
func respTopicKey[T, RT any](rt *RT) topicKey {
	v := reflect.ValueOf(rt).Elem()
	k := topicKey{name: v.FieldByName("Topic").String()}
	if _, ok := reflect.TypeFor[T]().FieldByName("TopicID"); ok {
		if id := v.FieldByName("TopicID"); id.IsValid() {
			k.id = id.Interface().([16]byte)
		}
	}
	return k
}

// byName is the key of a topic named only by name.
func byName(name string) topicKey { return topicKey{name: name} }

// topicCheck decides a topic named name needing op.
func (c *reqCtx) topicCheck(op Operation) func(name string) *denial {
	return func(name string) *denial { return c.check(op, ResTopic, name) }
}

// topicAnswering is the response topic RT answering the denied request
// topic t with d: the same name (and id, where both have one), and each
// partition t lists answered with d's error code (and message, where the
// partition has one).
func topicAnswering[T, RT any](t *T, d *denial) RT {
	var rt RT
	src, dst := reflect.ValueOf(t).Elem(), reflect.ValueOf(&rt).Elem()
	dst.FieldByName("Topic").Set(src.FieldByName("Topic"))
	if id := dst.FieldByName("TopicID"); id.IsValid() && src.FieldByName("TopicID").IsValid() {
		id.Set(src.FieldByName("TopicID"))
	}
	parts, out := src.FieldByName("Partitions"), dst.FieldByName("Partitions")
	for i := 0; i < parts.Len(); i++ {
		p := parts.Index(i)
		if p.Kind() == reflect.Struct {
			p = p.FieldByName("Partition")
		}
		out.Set(reflect.Append(out, partitionAnswering(out.Type().Elem(), int32(p.Int()), d)))
	}
	return rt
}

// topicsAnswering answers every topic of ts with d (topicAnswering).
func topicsAnswering[T, RT any](ts []T, d *denial) []RT {
	out := make([]RT, 0, len(ts))
	for i := range ts {
		out = append(out, topicAnswering[T, RT](&ts[i], d))
	}
	return out
}

// partitionAnswering is a fresh response partition of type typ with
// kmsg's defaults answering partition with d.
func partitionAnswering(typ reflect.Type, partition int32, d *denial) reflect.Value {
	p := reflect.New(typ)
	if def, ok := p.Interface().(interface{ Default() }); ok {
		def.Default()
	}
	v := p.Elem()
	v.FieldByName("Partition").SetInt(int64(partition))
	v.FieldByName("ErrorCode").SetInt(int64(d.code))
	if msg := v.FieldByName("ErrorMessage"); msg.IsValid() && msg.Type() == stringPtrType {
		msg.Set(reflect.ValueOf(d.msgPtr()))
	}
	if lw := v.FieldByName("LowWatermark"); lw.IsValid() {
		lw.SetInt(-1) // DeleteRecords: as Kafka answers a failed partition
	}
	return v
}
