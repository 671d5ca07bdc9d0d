package tenant

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestTransactionIDsPrefixed(t *testing.T) {
	m := New(teamANames)
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.Version, ip.TransactionalID = 4, kmsg.StringPtr("tx")
	if up, _ := upReq(t, m, ip); *up.TransactionalID != "team-a.tx" {
		t.Errorf("InitProducerID upstream %q", *up.TransactionalID)
	}
	idem := kmsg.NewPtrInitProducerIDRequest()
	idem.Version = 4
	if up, _ := upReq(t, m, idem); up.TransactionalID != nil {
		t.Errorf("idempotent InitProducerID upstream %q", *up.TransactionalID)
	}

	old := kmsg.NewPtrAddPartitionsToTxnRequest()
	old.Version, old.TransactionalID = 3, "tx"
	old.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "orders", Partitions: []int32{0}}}
	upOld, _ := upReq(t, m, old)
	if upOld.TransactionalID != "team-a.tx" || upOld.Topics[0].Topic != "team-a.orders" {
		t.Errorf("AddPartitionsToTxn v3 upstream %+v", upOld)
	}
	oldResp := kmsg.NewPtrAddPartitionsToTxnResponse()
	oldResp.Version = 3
	oldResp.Topics = []kmsg.AddPartitionsToTxnResponseTopic{{Topic: "team-a.orders"}, {Topic: "team-b.orders"}}
	if got := downResp(t, m, upOld, oldResp); len(got.Topics) != 1 || got.Topics[0].Topic != "orders" {
		t.Errorf("AddPartitionsToTxn v3 down %+v", got.Topics)
	}

	batched := kmsg.NewPtrAddPartitionsToTxnRequest()
	batched.Version = 5
	batched.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{{TransactionalID: "tx", Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "orders"}}}}
	upB, _ := upReq(t, m, batched)
	if tx := upB.Transactions[0]; tx.TransactionalID != "team-a.tx" || tx.Topics[0].Topic != "team-a.orders" {
		t.Errorf("AddPartitionsToTxn v5 upstream %+v", tx)
	}
	bResp := kmsg.NewPtrAddPartitionsToTxnResponse()
	bResp.Version = 5
	bResp.Transactions = []kmsg.AddPartitionsToTxnResponseTransaction{
		{TransactionalID: "team-a.tx", Topics: []kmsg.AddPartitionsToTxnResponseTransactionTopic{{Topic: "team-a.orders"}}},
		{TransactionalID: "team-b.tx"},
	}
	if got := downResp(t, m, upB, bResp); len(got.Transactions) != 1 || got.Transactions[0].TransactionalID != "tx" || got.Transactions[0].Topics[0].Topic != "orders" {
		t.Errorf("AddPartitionsToTxn v5 down %+v", got.Transactions)
	}

	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.Version, ao.TransactionalID, ao.Group = 3, "tx", "app"
	if up, _ := upReq(t, m, ao); up.TransactionalID != "team-a.tx" || up.Group != "team-a.app" {
		t.Errorf("AddOffsetsToTxn upstream %+v", up)
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.Version, end.TransactionalID = 4, "tx"
	if up, _ := upReq(t, m, end); up.TransactionalID != "team-a.tx" {
		t.Errorf("EndTxn upstream %q", up.TransactionalID)
	}
	toc := kmsg.NewPtrTxnOffsetCommitRequest()
	toc.Version, toc.TransactionalID, toc.Group = 4, "tx", "app"
	toc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "orders"}}
	if up, _ := upReq(t, m, toc); up.TransactionalID != "team-a.tx" || up.Group != "team-a.app" || up.Topics[0].Topic != "team-a.orders" {
		t.Errorf("TxnOffsetCommit upstream %+v", up)
	}
}

func TestDescribeAndListTransactionsHideOthers(t *testing.T) {
	m := New(teamANames)
	d := kmsg.NewPtrDescribeTransactionsRequest()
	d.TransactionalIDs = []string{"tx"}
	upD, _ := upReq(t, m, d)
	if !slices.Equal(upD.TransactionalIDs, []string{"team-a.tx"}) {
		t.Fatalf("describe upstream %q", upD.TransactionalIDs)
	}
	dr := kmsg.NewPtrDescribeTransactionsResponse()
	dr.TransactionStates = []kmsg.DescribeTransactionsResponseTransactionState{
		{TransactionalID: "team-a.tx", Topics: []kmsg.DescribeTransactionsResponseTransactionStateTopic{{Topic: "team-a.orders"}, {Topic: "team-b.orders"}}},
		{TransactionalID: "team-b.tx"},
	}
	got := downResp(t, m, upD, dr)
	if len(got.TransactionStates) != 1 || got.TransactionStates[0].TransactionalID != "tx" || len(got.TransactionStates[0].Topics) != 1 ||
		got.TransactionStates[0].Topics[0].Topic != "orders" {
		t.Errorf("describe down %+v", got.TransactionStates)
	}

	l := kmsg.NewPtrListTransactionsRequest()
	l.Version, l.TransactionalIDPattern = 2, kmsg.StringPtr("t.*")
	upL, _ := upReq(t, m, l)
	if *upL.TransactionalIDPattern != `team-a\.(?:(?-s:t.*))` {
		t.Errorf("pattern upstream %q", *upL.TransactionalIDPattern)
	}
	lr := kmsg.NewPtrListTransactionsResponse()
	lr.Version = 2
	lr.TransactionStates = []kmsg.ListTransactionsResponseTransactionState{{TransactionalID: "team-a.tx"}, {TransactionalID: "team-b.tx"}, {TransactionalID: "tx"}}
	if got := downResp(t, m, upL, lr); len(got.TransactionStates) != 1 || got.TransactionStates[0].TransactionalID != "tx" {
		t.Errorf("list down %+v", got.TransactionStates)
	}
	bad := kmsg.NewPtrListTransactionsRequest()
	bad.Version, bad.TransactionalIDPattern = 2, kmsg.StringPtr(").*|(")
	_, a := upReq(t, m, bad)
	if resp := answered[*kmsg.ListTransactionsResponse](t, a); resp.ErrorCode != kerr.InvalidRegularExpression.Code {
		t.Errorf("hostile pattern answered %+v", resp)
	}
}

func TestOffsetsPrefixedAndForeignHidden(t *testing.T) {
	m := New(teamANames)
	c := kmsg.NewPtrOffsetCommitRequest()
	c.Version, c.Group = 9, "app"
	c.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "orders"}}
	upC, _ := upReq(t, m, c)
	if upC.Group != "team-a.app" || upC.Topics[0].Topic != "team-a.orders" {
		t.Errorf("commit upstream %+v", upC)
	}
	cr := kmsg.NewPtrOffsetCommitResponse()
	cr.Version = 9
	cr.Topics = []kmsg.OffsetCommitResponseTopic{{Topic: "team-a.orders"}}
	if got := downResp(t, m, upC, cr); got.Topics[0].Topic != "orders" {
		t.Errorf("commit down %+v", got.Topics)
	}

	old := kmsg.NewPtrOffsetFetchRequest()
	old.Version, old.Group = 7, "app"
	upOld, _ := upReq(t, m, old)
	if upOld.Group != "team-a.app" {
		t.Errorf("fetch v7 upstream %q", upOld.Group)
	}
	oldResp := kmsg.NewPtrOffsetFetchResponse()
	oldResp.Version = 7
	oldResp.Topics = []kmsg.OffsetFetchResponseTopic{{Topic: "team-a.orders"}, {Topic: "team-b.orders"}, {Topic: "__consumer_offsets"}}
	if got := downResp(t, m, upOld, oldResp); len(got.Topics) != 1 || got.Topics[0].Topic != "orders" {
		t.Errorf("fetch v7 all topics down %+v", got.Topics)
	}

	batched := kmsg.NewPtrOffsetFetchRequest()
	batched.Version = 9
	batched.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "app", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "orders"}}}, {Group: "other"}}
	upB, _ := upReq(t, m, batched)
	if upB.Groups[0].Group != "team-a.app" || upB.Groups[0].Topics[0].Topic != "team-a.orders" || upB.Groups[1].Group != "team-a.other" {
		t.Errorf("fetch v9 upstream %+v", upB.Groups)
	}
	br := kmsg.NewPtrOffsetFetchResponse()
	br.Version = 9
	br.Groups = []kmsg.OffsetFetchResponseGroup{
		{Group: "team-a.app", Topics: []kmsg.OffsetFetchResponseGroupTopic{{Topic: "team-a.orders"}}},
		{Group: "team-a.other", Topics: []kmsg.OffsetFetchResponseGroupTopic{{Topic: "team-b.orders"}}},
	}
	got := downResp(t, m, upB, br)
	if len(got.Groups) != 2 || got.Groups[0].Group != "app" || got.Groups[0].Topics[0].Topic != "orders" || len(got.Groups[1].Topics) != 0 {
		t.Errorf("fetch v9 down %+v", got.Groups)
	}

	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group, od.Topics = "app", []kmsg.OffsetDeleteRequestTopic{{Topic: "orders"}}
	if up, _ := upReq(t, m, od); up.Group != "team-a.app" || up.Topics[0].Topic != "team-a.orders" {
		t.Errorf("offset delete upstream %+v", up)
	}
}
