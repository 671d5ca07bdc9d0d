package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// describeTransactionTopics removes from each described transaction the
// topics the principal may not describe, as Kafka's DescribeTransactions
// does: Describe on the transactional id shows the transaction, not every
// topic it writes.
func describeTransactionTopics(c *reqCtx, v filter.Verdict) filter.Verdict {
	return afterResponse(v, filter.Then(func(dr *kmsg.DescribeTransactionsResponse) error {
		for i := range dr.TransactionStates {
			s := &dr.TransactionStates[i]
			s.Topics = keepOnly(s.Topics, func(t kmsg.DescribeTransactionsResponseTransactionStateTopic) bool {
				return c.visible(OpDescribe, ResTopic, t.Topic)
			})
		}
		return nil
	}))
}
