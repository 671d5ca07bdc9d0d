package tenant

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// brokerOnlyGroupAPIs are the APIs carrying group ids that only brokers
// and controllers send each other (the share-group state APIs, transaction
// markers, producer-id blocks). No client of a virtual cluster has reason
// to, and each would reach the upstream's state beneath every tenant: the
// engine closes a connection that sends one.
func brokerOnlyGroupAPIs() []api {
	keys := []kmsg.Key{
		kmsg.InitializeShareGroupState, kmsg.ReadShareGroupState, kmsg.WriteShareGroupState,
		kmsg.DeleteShareGroupState, kmsg.ReadShareGroupStateSummary,
	}
	fields := []string{"req.GroupID", "req.Topics.TopicID", "resp.Topics.TopicID"}
	t := make([]api, len(keys))
	for i, k := range keys {
		t[i] = api{
			key: k.Int16(),
			request: func(context.Context, *Mapper, kmsg.Request) error {
				return fmt.Errorf("tenant: %s is a broker-to-broker API, refused in a virtual cluster", k.Name())
			},
			fields: fields,
		}
	}
	return t
}
