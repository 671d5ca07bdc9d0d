package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// handleInitProducerID enforces Write on the transactional id, or, for an
// idempotent producer without one, IdempotentWrite on the cluster or Write
// on any topic (as Kafka since KIP-679).
func handleInitProducerID(c *reqCtx, r *kmsg.InitProducerIDRequest) filter.Verdict {
	if r.TransactionalID != nil {
		if d := c.check(OpWrite, ResTransactionalID, *r.TransactionalID); d != nil {
			return denyTopLevel(r, d)
		}
		return filter.Verdict{}
	}
	if c.forced != nil {
		return denyTopLevel(r, c.forced)
	}
	d := c.decide(OpIdempotentWrite, ResCluster, ClusterName)
	if d.Allowed {
		c.record(OpIdempotentWrite, ResCluster, ClusterName, d)
		return filter.Verdict{}
	}
	if c.entry.lists(OpWrite, ResTopic) {
		if any := c.subj.DecideAny(OpWrite, ResTopic); any.Allowed {
			c.record(OpWrite, ResTopic, "*", any)
			return filter.Verdict{}
		}
	}
	if den := c.record(OpIdempotentWrite, ResCluster, ClusterName, d); den != nil {
		return denyTopLevel(r, den)
	}
	return filter.Verdict{}
}

// handleAddPartitionsToTxn: clients (v0-3) need Write on the transactional
// id and on every topic. As Kafka, the request is never split: if any
// topic is denied, it gets TOPIC_AUTHORIZATION_FAILED and every other
// partition OPERATION_NOT_ATTEMPTED. Brokers verifying transactions (v4+)
// need ClusterAction.
func handleAddPartitionsToTxn(c *reqCtx, r *kmsg.AddPartitionsToTxnRequest) filter.Verdict {
	if r.Version >= 4 {
		if d := c.checkCluster(OpClusterAction); d != nil {
			return denyTopLevel(r, d)
		}
		return filter.Verdict{}
	}
	if d := c.check(OpWrite, ResTransactionalID, r.TransactionalID); d != nil {
		return addPartitionsDeny(r, func(int) *denial { return d })
	}
	denials := make([]*denial, len(r.Topics))
	denied := 0
	for i, t := range r.Topics {
		if denials[i] = c.check(OpWrite, ResTopic, t.Topic); denials[i] != nil {
			denied++
		}
	}
	if denied == 0 {
		return filter.Verdict{}
	}
	notAttempted := &denial{code: errOperationNotAttempted}
	return addPartitionsDeny(r, func(i int) *denial {
		if denials[i] != nil {
			return denials[i]
		}
		return notAttempted
	})
}

func addPartitionsDeny(r *kmsg.AddPartitionsToTxnRequest, denialOf func(i int) *denial) filter.Verdict {
	resp := r.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	for i, t := range r.Topics {
		st := kmsg.NewAddPartitionsToTxnResponseTopic()
		st.Topic = t.Topic
		d := denialOf(i)
		for _, p := range t.Partitions {
			sp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			sp.Partition, sp.ErrorCode = p, d.code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return filter.Verdict{Respond: resp}
}

func handleAddOffsetsToTxn(c *reqCtx, r *kmsg.AddOffsetsToTxnRequest) filter.Verdict {
	if d := c.check(OpWrite, ResTransactionalID, r.TransactionalID); d != nil {
		return denyTopLevel(r, d)
	}
	if d := c.check(OpRead, ResGroup, r.Group); d != nil {
		return denyTopLevel(r, d)
	}
	return filter.Verdict{}
}

func handleEndTxn(c *reqCtx, r *kmsg.EndTxnRequest) filter.Verdict {
	if d := c.check(OpWrite, ResTransactionalID, r.TransactionalID); d != nil {
		return denyTopLevel(r, d)
	}
	return filter.Verdict{}
}

func handleDescribeTransactions(c *reqCtx, r *kmsg.DescribeTransactionsRequest) filter.Verdict {
	return describeTransactionTopics(c, splitNamed(c, r, &r.TransactionalIDs, OpDescribe, ResTransactionalID,
		func(dr *kmsg.DescribeTransactionsResponse) *[]kmsg.DescribeTransactionsResponseTransactionState {
			return &dr.TransactionStates
		},
		func(s *kmsg.DescribeTransactionsResponseTransactionState) string { return s.TransactionalID },
		func(id string, d *denial) kmsg.DescribeTransactionsResponseTransactionState {
			s := kmsg.NewDescribeTransactionsResponseTransactionState()
			s.TransactionalID, s.ErrorCode = id, d.code
			s.ProducerID, s.ProducerEpoch = -1, -1
			return s
		}))
}

// handleListTransactions lists only the transactions the principal may
// describe, as Kafka filters them.
func handleListTransactions(c *reqCtx, r *kmsg.ListTransactionsRequest) filter.Verdict {
	return filter.Verdict{OnResponse: filter.Then(func(lr *kmsg.ListTransactionsResponse) error {
		lr.TransactionStates = keepOnly(lr.TransactionStates, func(s kmsg.ListTransactionsResponseTransactionState) bool {
			return c.visible(OpDescribe, ResTransactionalID, s.TransactionalID)
		})
		return nil
	})}
}

// denyWriteTxnMarkers answers every partition of every marker.
func denyWriteTxnMarkers(r *kmsg.WriteTxnMarkersRequest, d *denial) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	for _, m := range r.Markers {
		sm := kmsg.NewWriteTxnMarkersResponseMarker()
		sm.ProducerID = m.ProducerID
		sm.Topics = topicsAnswering[kmsg.WriteTxnMarkersRequestMarkerTopic, kmsg.WriteTxnMarkersResponseMarkerTopic](m.Topics, d)
		resp.Markers = append(resp.Markers, sm)
	}
	return resp
}
