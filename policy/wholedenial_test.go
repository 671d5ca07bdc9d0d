package policy

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestWholeDenialPrecedesTopicIDs: a request its group or transactional id
// denies as a whole (OffsetCommit v10, TxnOffsetCommit v6, which name
// topics by id) is answered with that denial for every partition, as
// Kafka's authorizer does before it looks a topic id up: an id kproxy
// knows and one no topic has get the same answer, so the answer is no
// oracle for which ids exist. Before, an unknown id got UNKNOWN_TOPIC_ID
// and a known one GROUP_AUTHORIZATION_FAILED. A denied request listing no
// topic is answered too, never forwarded.
func TestWholeDenialPrecedesTopicIDs(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  default: deny
  rules:
    - {name: topics, principals: ["*"], allow: [all], topics: ["*"]}
`, nil)
	known, unknown := [16]byte{0xaa, 1}, [16]byte{0xbb, 2}
	enf.ids.learn(known, "a")
	requests := map[string]struct {
		build func(ids ...[16]byte) kmsg.Request
		code  int16
	}{
		"OffsetCommit v10": {func(ids ...[16]byte) kmsg.Request {
			r := kmsg.NewPtrOffsetCommitRequest()
			r.SetVersion(10)
			r.Group = "g"
			for _, id := range ids {
				r.Topics = append(r.Topics, kmsg.OffsetCommitRequestTopic{TopicID: id, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0}}})
			}
			return r
		}, errGroupAuthorizationFailed},
		"TxnOffsetCommit v6": {func(ids ...[16]byte) kmsg.Request {
			r := kmsg.NewPtrTxnOffsetCommitRequest()
			r.SetVersion(6)
			r.TransactionalID, r.Group = "tx", "g"
			for _, id := range ids {
				r.Topics = append(r.Topics, kmsg.TxnOffsetCommitRequestTopic{TopicID: id, Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0}}})
			}
			return r
		}, errTransactionalIDAuthorizationFailed},
	}
	for name, rq := range requests {
		answer := func(ids ...[16]byte) kmsg.Response {
			v := filterRequest(enf, testConn, rq.build(ids...))
			if v.Respond == nil {
				t.Fatalf("%s naming %d topics: not answered by the policy: %+v", name, len(ids), v)
			}
			return v.Respond
		}
		k, u := answer(known), answer(unknown)
		if !carriesCode(reflect.ValueOf(k), rq.code) || carriesCode(reflect.ValueOf(k), errUnknownTopicID) || carriesCode(reflect.ValueOf(u), errUnknownTopicID) {
			t.Errorf("%s: answers %+v (known id) and %+v (unknown id), want error %d for both", name, k, u, rq.code)
		}
		kb := bytes.ReplaceAll(k.AppendTo(nil), known[:], unknown[:])
		if !bytes.Equal(kb, u.AppendTo(nil)) {
			t.Errorf("%s: a known id's answer differs from an unknown id's:\n%q\n%q", name, kb, u.AppendTo(nil))
		}
		answer() // no topic: still answered here
	}
}
