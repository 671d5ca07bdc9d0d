package tenant

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnAPIs maps the transaction APIs: the transactional id, the group of
// offsets committed in a transaction and the topics a transaction spans.
func txnAPIs() []api {
	return []api{
		typedEntry[*kmsg.InitProducerIDRequest, *kmsg.InitProducerIDResponse](kmsg.InitProducerID.Int16(),
			func(_ context.Context, m *Mapper, r *kmsg.InitProducerIDRequest) error {
				upPtr(r.TransactionalID, m.UpTxnID)
				return nil
			}, nil, "req.TransactionalID"),
		typedEntry(kmsg.AddPartitionsToTxn.Int16(), upAddPartitionsToTxn, downAddPartitionsToTxn,
			"req.TransactionalID", "req.Topics.Topic", "req.Transactions.TransactionalID", "req.Transactions.Topics.Topic",
			"resp.Topics.Topic", "resp.Transactions.TransactionalID", "resp.Transactions.Topics.Topic"),
		typedEntry[*kmsg.AddOffsetsToTxnRequest, *kmsg.AddOffsetsToTxnResponse](kmsg.AddOffsetsToTxn.Int16(),
			func(_ context.Context, m *Mapper, r *kmsg.AddOffsetsToTxnRequest) error {
				r.TransactionalID, r.Group = m.UpTxnID(r.TransactionalID), m.UpGroup(r.Group)
				return nil
			}, nil, "req.TransactionalID", "req.Group"),
		typedEntry[*kmsg.EndTxnRequest, *kmsg.EndTxnResponse](kmsg.EndTxn.Int16(),
			func(_ context.Context, m *Mapper, r *kmsg.EndTxnRequest) error {
				r.TransactionalID = m.UpTxnID(r.TransactionalID)
				return nil
			}, nil, "req.TransactionalID"),
		typedEntry(kmsg.TxnOffsetCommit.Int16(), upTxnOffsetCommit, downTxnOffsetCommit,
			"req.TransactionalID", "req.Group", "req.Topics.Topic", "req.Topics.TopicID", "resp.Topics.Topic", "resp.Topics.TopicID"),
		typedEntry(kmsg.DescribeTransactions.Int16(),
			func(_ context.Context, m *Mapper, r *kmsg.DescribeTransactionsRequest) error {
				upEach(r.TransactionalIDs, m.UpTxnID)
				return nil
			},
			downDescribeTransactions,
			"req.TransactionalIDs", "resp.TransactionStates.TransactionalID", "resp.TransactionStates.Topics.Topic"),
		typedEntry(kmsg.ListTransactions.Int16(), upListTransactions, downListTransactions,
			"req.TransactionalIDPattern", "resp.TransactionStates.TransactionalID"),
	}
}

func upAddPartitionsToTxn(_ context.Context, m *Mapper, r *kmsg.AddPartitionsToTxnRequest) error {
	r.TransactionalID = m.UpTxnID(r.TransactionalID)
	upTopics(m, r.Topics, func(t *kmsg.AddPartitionsToTxnRequestTopic) *string { return &t.Topic })
	for i := range r.Transactions {
		t := &r.Transactions[i]
		t.TransactionalID = m.UpTxnID(t.TransactionalID)
		upTopics(m, t.Topics, func(t *kmsg.AddPartitionsToTxnRequestTransactionTopic) *string { return &t.Topic })
	}
	return nil
}

func downAddPartitionsToTxn(m *Mapper, _ *kmsg.AddPartitionsToTxnRequest, resp *kmsg.AddPartitionsToTxnResponse) error {
	resp.Topics = keepMapped(resp.Topics, func(t *kmsg.AddPartitionsToTxnResponseTopic) *string { return &t.Topic }, m.DownTopic)
	resp.Transactions = keepMapped(resp.Transactions, func(t *kmsg.AddPartitionsToTxnResponseTransaction) *string { return &t.TransactionalID }, m.DownTxnID)
	for i := range resp.Transactions {
		t := &resp.Transactions[i]
		t.Topics = keepMapped(t.Topics, func(t *kmsg.AddPartitionsToTxnResponseTransactionTopic) *string { return &t.Topic }, m.DownTopic)
	}
	return nil
}

func upTxnOffsetCommit(ctx context.Context, m *Mapper, r *kmsg.TxnOffsetCommitRequest) error {
	r.TransactionalID, r.Group = m.UpTxnID(r.TransactionalID), m.UpGroup(r.Group)
	for i := range r.Topics {
		upTopicRef(ctx, m, &r.Topics[i].Topic, &r.Topics[i].TopicID)
	}
	return nil
}

func downTxnOffsetCommit(m *Mapper, _ *kmsg.TxnOffsetCommitRequest, resp *kmsg.TxnOffsetCommitResponse) error {
	resp.Topics = keepTopicRefs(m, resp.Topics, func(t *kmsg.TxnOffsetCommitResponseTopic) (*string, *[16]byte) { return &t.Topic, &t.TopicID })
	return nil
}

func downDescribeTransactions(m *Mapper, _ *kmsg.DescribeTransactionsRequest, resp *kmsg.DescribeTransactionsResponse) error {
	resp.TransactionStates = keepMapped(resp.TransactionStates,
		func(s *kmsg.DescribeTransactionsResponseTransactionState) *string { return &s.TransactionalID }, m.DownTxnID)
	for i := range resp.TransactionStates {
		s := &resp.TransactionStates[i]
		s.Topics = keepMapped(s.Topics, func(t *kmsg.DescribeTransactionsResponseTransactionStateTopic) *string { return &t.Topic }, m.DownTopic)
	}
	return nil
}

// upListTransactions confines a TransactionalIDPattern (RE2J, whole id) to
// the tenant's ids; the response is filtered in any case.
func upListTransactions(_ context.Context, m *Mapper, r *kmsg.ListTransactionsRequest) error {
	if r.TransactionalIDPattern == nil || *r.TransactionalIDPattern == "" {
		return nil
	}
	up, err := upRegex(m.names.TransactionalID, *r.TransactionalIDPattern)
	if err != nil {
		resp := r.ResponseKind().(*kmsg.ListTransactionsResponse)
		resp.Version, resp.ErrorCode = r.Version, kerr.InvalidRegularExpression.Code
		return &Answer{Response: resp}
	}
	r.TransactionalIDPattern = &up
	return nil
}

func downListTransactions(m *Mapper, _ *kmsg.ListTransactionsRequest, resp *kmsg.ListTransactionsResponse) error {
	resp.TransactionStates = keepMapped(resp.TransactionStates,
		func(s *kmsg.ListTransactionsResponseTransactionState) *string { return &s.TransactionalID }, m.DownTxnID)
	return nil
}
