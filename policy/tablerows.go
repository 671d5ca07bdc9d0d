package policy

import "github.com/twmb/franz-go/pkg/kmsg"

// The builders of the kinds of rows operationTable holds many of.

// setupRow is the row of ApiVersions and the SASL exchange, which a client
// needs to connect at all.
func setupRow(key kmsg.Key) apiEntry {
	return apiEntry{key: key, setup: true, answer: "always allowed: needed to connect"}
}

// clusterRow is the row of an API that needs op on the cluster (when says
// when, "" always) and answers a denial with its top-level error code.
func clusterRow(key kmsg.Key, op Operation, when string) apiEntry {
	return apiEntry{key: key, needs: []need{nd(op, ResCluster, when)}, answer: answerClusterTop, handle: anyKey(clusterOp(op))}
}

// clusterItemsRow is the row of an API that needs op on the cluster and
// answers a denial per item of the request, as deny builds the response.
func clusterItemsRow[R kmsg.Request](key kmsg.Key, op Operation, answer string, deny func(R, *denial) kmsg.Response) apiEntry {
	return apiEntry{key: key, needs: []need{nd(op, ResCluster, "")}, answer: answer, handle: on(clusterOpWith(op, deny))}
}

// closedInternal is the row of a broker-internal API whose response has no
// error field: a denial closes the connection.
func closedInternal(key kmsg.Key) apiEntry {
	return apiEntry{key: key, needs: []need{nd(OpClusterAction, ResCluster, "")}, answer: answerClosed, handle: anyKey(closeUnlessCluster(OpClusterAction))}
}

// groupRow is the row of a single-group API that needs Read on the group
// the request names.
func groupRow[R kmsg.Request](key kmsg.Key, group func(R) string) apiEntry {
	return apiEntry{key: key, needs: []need{nd(OpRead, ResGroup, "")}, answer: "GROUP_AUTHORIZATION_FAILED", handle: on(groupOp(OpRead, group))}
}

// configNeeds is what the config APIs need with op, per resource type.
func configNeeds(op Operation) []need {
	return []need{
		nd(op, ResTopic, "topic resources"),
		nd(op, ResCluster, "broker, broker logger, client metrics resources"),
		nd(op, ResGroup, "group resources"),
	}
}
