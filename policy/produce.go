package policy

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// handleProduce enforces Write on each topic (and on the transactional id
// of transactional produces) and the produce governance, answering denied
// topics and partitions with per-partition errors.
func handleProduce(c *reqCtx, r *kmsg.ProduceRequest) filter.Verdict {
	// As Kafka: a transactional produce the principal may not write as
	// fails whole, and transactional batches need a transactional id.
	if r.TransactionID != nil {
		if d := c.check(OpWrite, ResTransactionalID, *r.TransactionID); d != nil {
			return produceDenyAll(r, d)
		}
	} else if c.forced == nil && !c.st.auditOnly && anyTransactionalBatch(r) {
		return produceDenyAll(r, &denial{code: errTransactionalIDAuthorizationFailed,
			msg: "kproxy policy: transactional records without a transactional id"})
	}
	govs := produceGovernance(c)
	if d := checkAcks(c, r, govs); d != nil {
		return produceDenyAll(r, d)
	}

	orig := r.Topics
	// parts[i][j] is the denial of partition j of topic i; allocated on the
	// first denial, so an allowed produce allocates nothing here.
	var parts [][]*denial
	deny := func(i, j int, d *denial) {
		if parts == nil {
			parts = make([][]*denial, len(orig))
		}
		if parts[i] == nil {
			parts[i] = make([]*denial, len(orig[i].Partitions))
		}
		if j < 0 {
			for k := range parts[i] {
				parts[i][k] = d
			}
			return
		}
		parts[i][j] = d
	}
	anyDenied, allowed := false, 0
	for i := range orig {
		t := &orig[i]
		name, _ := c.topicName(t.Topic, t.TopicID)
		topicDenial := c.checkTopicRef(t.Topic, t.TopicID, func(name string) *denial { return c.check(OpWrite, ResTopic, name) })
		if topicDenial != nil {
			deny(i, -1, topicDenial)
			anyDenied = true
			continue
		}
		for j := range t.Partitions {
			if d := checkBatches(c, govs, name, t.Partitions[j].Records); d != nil {
				deny(i, j, d)
				anyDenied = true
			} else {
				allowed++
			}
		}
	}
	if !anyDenied {
		return filter.Verdict{}
	}
	keys := make([]topicKey, len(orig))
	kept := make([]kmsg.ProduceRequestTopic, 0, len(orig))
	for i := range orig {
		t := &orig[i]
		keys[i] = topicKey{t.Topic, t.TopicID}
		switch {
		case parts[i] == nil:
			kept = append(kept, *t)
		case countDenied(parts[i]) < len(t.Partitions):
			kt := *t
			kt.Partitions = keepAllowed(t.Partitions, parts[i])
			kept = append(kept, kt)
		}
	}
	merge := filter.Then(func(pr *kmsg.ProduceResponse) error {
		byKey := make(map[topicKey]int, len(orig))
		for i := len(orig) - 1; i >= 0; i-- {
			byKey[keys[i]] = i
		}
		// Partitions first, inside topics the upstream answered in part.
		for k := range pr.Topics {
			rt := &pr.Topics[k]
			i, ok := byKey[topicKey{rt.Topic, rt.TopicID}]
			if !ok || parts[i] == nil {
				continue
			}
			nums := partitionNums(orig[i].Partitions)
			rt.Partitions = mergeInOrder(rt.Partitions, func(p *kmsg.ProduceResponseTopicPartition) int32 { return p.Partition }, nums,
				func(j int) (kmsg.ProduceResponseTopicPartition, bool) {
					d, ok := denialAt(parts[i], j)
					if !ok {
						return kmsg.ProduceResponseTopicPartition{}, false
					}
					return produceErrPartition(nums[j], d), true
				})
		}
		pr.Topics = mergeInOrder(pr.Topics, func(t *kmsg.ProduceResponseTopic) topicKey { return topicKey{t.Topic, t.TopicID} }, keys,
			func(i int) (kmsg.ProduceResponseTopic, bool) {
				if parts[i] == nil || countDenied(parts[i]) < len(parts[i]) {
					return kmsg.ProduceResponseTopic{}, false
				}
				st := kmsg.NewProduceResponseTopic()
				st.Topic, st.TopicID = orig[i].Topic, orig[i].TopicID
				for j, p := range orig[i].Partitions {
					st.Partitions = append(st.Partitions, produceErrPartition(p.Partition, parts[i][j]))
				}
				return st, true
			})
		return nil
	})
	return c.split(r, allowed == 0, func() { r.Topics = kept }, merge)
}

func produceDenyAll(r *kmsg.ProduceRequest, d *denial) filter.Verdict {
	resp := r.ResponseKind().(*kmsg.ProduceResponse)
	for _, t := range r.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			st.Partitions = append(st.Partitions, produceErrPartition(p.Partition, d))
		}
		resp.Topics = append(resp.Topics, st)
	}
	return filter.Verdict{Respond: resp}
}

func produceErrPartition(partition int32, d *denial) kmsg.ProduceResponseTopicPartition {
	p := kmsg.NewProduceResponseTopicPartition()
	p.Partition = partition
	p.BaseOffset = -1
	p.ErrorCode = d.code
	p.ErrorMessage = d.msgPtr()
	return p
}

func partitionNums(ps []kmsg.ProduceRequestTopicPartition) []int32 {
	nums := make([]int32, len(ps))
	for i := range ps {
		nums[i] = ps[i].Partition
	}
	return nums
}

func anyTransactionalBatch(r *kmsg.ProduceRequest) bool {
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if hasTransactionalBatch(p.Records) {
				return true
			}
		}
	}
	return false
}

// produceGovernance returns the governance rules with a produce section
// that apply to this request's principal.
func produceGovernance(c *reqCtx) []*govRule {
	var out []*govRule
	for _, g := range c.governance() {
		if g.produce != nil {
			out = append(out, g)
		}
	}
	return out
}

// checkAcks applies required_acks: acks is one setting for the whole
// request, so a rule whose topics cover any topic in it refuses all of it,
// with INVALID_REQUIRED_ACKS as a broker does for acks it does not accept.
func checkAcks(c *reqCtx, r *kmsg.ProduceRequest, govs []*govRule) *denial {
	for _, g := range govs {
		if !g.produce.checkAcks || acksSatisfy(r.Acks, g.produce.minAcks) {
			continue
		}
		for _, t := range r.Topics {
			name, _ := c.topicName(t.Topic, t.TopicID)
			if !g.coversTopic(name) {
				continue
			}
			want := "all (-1)"
			if g.produce.minAcks == 1 {
				want = "1 or all (-1)"
			}
			v := &violation{rule: g.name, check: "required_acks", code: errInvalidRequiredAcks,
				what: fmt.Sprintf("acks=%d; required_acks allows %s", r.Acks, want)}
			return c.violated(v, ResTopic, name)
		}
	}
	return nil
}

// acksSatisfy orders acks by durability: 0 < 1 < all (-1).
func acksSatisfy(acks, minAcks int16) bool {
	rank := func(a int16) int {
		if a == -1 {
			return 2
		}
		return int(a)
	}
	return rank(acks) >= rank(minAcks)
}

// checkBatches applies allowed_compression, max_batch_bytes and
// require_idempotence to one partition's records, reading only batch
// headers. Records too malformed to walk are left for the broker to
// reject with CORRUPT_MESSAGE.
func checkBatches(c *reqCtx, govs []*govRule, topic string, records []byte) *denial {
	if c.forced != nil {
		return c.forced
	}
	for _, g := range govs {
		pg := g.produce
		if (pg.compression == 0 && pg.maxBatch == 0 && !pg.idempotent) || !g.coversTopic(topic) {
			continue
		}
		var v *violation
		forEachBatch(records, func(b batchInfo) error {
			switch {
			case pg.compression != 0 && pg.compression&(1<<b.codec) == 0:
				v = &violation{rule: g.name, check: "allowed_compression", code: errPolicyViolation,
					what: fmt.Sprintf("compression %s is not in allowed_compression", codecName(b.codec))}
			case pg.maxBatch > 0 && b.size > pg.maxBatch:
				v = &violation{rule: g.name, check: "max_batch_bytes", code: errMessageTooLarge,
					what: fmt.Sprintf("a %d-byte record batch exceeds max_batch_bytes %d", b.size, pg.maxBatch)}
			case pg.idempotent && b.producerID < 0:
				v = &violation{rule: g.name, check: "require_idempotence", code: errPolicyViolation,
					what: "require_idempotence: batch has no producer id (enable idempotence)"}
			default:
				return nil
			}
			return errStop
		})
		if v != nil {
			return c.violated(v, ResTopic, topic)
		}
	}
	return nil
}

func codecName(codec uint8) string {
	if names := policyconfig.CompressionCodecs(); int(codec) < len(names) {
		return names[codec]
	}
	return fmt.Sprintf("codec %d", codec)
}
