package policy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// need is one operation/resource pair an API asks for, and when.
type need struct {
	op   Operation
	res  ResourceType
	when string // "" when always
}

// apiEntry is one row of the operation table: what an API key needs and
// the handler that enforces exactly that.
type apiEntry struct {
	key   kmsg.Key
	needs []need
	// setup marks ApiVersions and the SASL exchange: always allowed, never
	// decoded by the policy, because a client needs them to connect at all.
	setup bool
	// answer says, for the docs, how a denial is answered.
	answer string
	// listing marks the listing APIs, whose denial leaves out what the
	// principal may not describe instead of answering an error.
	listing bool
	handle  handler
	// decideRaw, when set, decides the API from its raw body first (see
	// filter.DecideRaw).
	decideRaw func(e *Enforcer, conn *filter.Conn, version int16, body []byte) (filter.Verdict, bool)
}

func (a *apiEntry) lists(op Operation, rt ResourceType) bool {
	for _, n := range a.needs {
		if n.op == op && n.res == rt {
			return true
		}
	}
	return false
}

func nd(op Operation, res ResourceType, when string) need { return need{op: op, res: res, when: when} }

// whenByID is the need of the APIs that name topics by id: without
// Describe on the topic its id is answered as unknown (checkTopicRef).
const whenByID = "topic named by id: without it, UNKNOWN_TOPIC_ID and no name"

// whenGroupTopics is the need of the group describe APIs: a described
// group naming a topic without it is answered TOPIC_AUTHORIZATION_FAILED.
const whenGroupTopics = "every topic the group's members subscribe to or are assigned (as Kafka 4.0)"

// Answers shared by many rows.
const (
	answerTopLevel   = "whole request: top-level error code"
	answerClusterTop = "whole request: CLUSTER_AUTHORIZATION_FAILED (top-level)"
	answerNone       = "never denied (Kafka checks no ACL)"
	answerInternal   = "whole request (broker/controller-internal API)"
	answerClosed     = answerInternal + ": connection closed (no error field)"
	// answerTopicsSplit: the request is split, its denied topics answered per partition.
	answerTopicsSplit = "denied topics: TOPIC_AUTHORIZATION_FAILED per partition (request split)"
	// answerGroupOrTopic: the group heartbeat APIs, denied whole.
	answerGroupOrTopic = "GROUP_ or TOPIC_AUTHORIZATION_FAILED (top-level)"
	// answerGroupsSplit: the group describe APIs, split per group.
	answerGroupsSplit = "denied groups: GROUP_AUTHORIZATION_FAILED (request split); a group naming a hidden topic: TOPIC_AUTHORIZATION_FAILED, no details"
)

// operationTable is the table docs/policy.md shows and the enforcer uses:
// for every API key kmsg knows, the operation/resource pairs Kafka's
// authorizer asks for. Each call builds a fresh table; the enforcer builds
// it once.
func operationTable() []apiEntry {
	internal := func(key kmsg.Key) apiEntry {
		return apiEntry{key: key, needs: []need{nd(OpClusterAction, ResCluster, "")}, answer: answerInternal, handle: anyKey(clusterOp(OpClusterAction))}
	}
	clusterAlter := func(key kmsg.Key) apiEntry { return clusterRow(key, OpAlter, "") }
	clusterDescribe := func(key kmsg.Key) apiEntry { return clusterRow(key, OpDescribe, "") }
	return []apiEntry{
		{key: kmsg.Produce, needs: []need{
			nd(OpWrite, ResTopic, ""),
			nd(OpWrite, ResTransactionalID, "transactional id set or transactional batches"),
			nd(OpDescribe, ResTopic, whenByID),
		}, answer: "denied topics: TOPIC_AUTHORIZATION_FAILED per partition (request split); transactional id: TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition",
			handle: on(handleProduce), decideRaw: (*Enforcer).decideProduceRaw},
		{key: kmsg.Fetch, needs: []need{
			nd(OpRead, ResTopic, "consumer fetch"),
			nd(OpClusterAction, ResCluster, "follower fetch: replica id >= 0"),
			nd(OpDescribe, ResTopic, whenByID),
		}, answer: answerTopicsSplit, handle: on(handleFetch)},
		{key: kmsg.ListOffsets, needs: []need{nd(OpDescribe, ResTopic, "")},
			answer: answerTopicsSplit, handle: on(handleListOffsets)},
		{key: kmsg.Metadata, needs: []need{
			nd(OpDescribe, ResTopic, ""),
			nd(OpCreate, ResCluster, "auto-creation; either pair"),
			nd(OpCreate, ResTopic, "auto-creation; either pair"),
		}, answer: "listed topics: TOPIC_AUTHORIZATION_FAILED; all-topics requests: hidden; auto-creation disabled for topics the principal may not create", handle: on(withAuthorizedOps(handleMetadata))},
		internal(kmsg.LeaderAndISR),
		internal(kmsg.StopReplica),
		internal(kmsg.UpdateMetadata),
		internal(kmsg.ControlledShutdown),
		{key: kmsg.OffsetCommit, needs: []need{nd(OpRead, ResGroup, ""), nd(OpRead, ResTopic, ""), nd(OpDescribe, ResTopic, whenByID)},
			answer: "group: GROUP_AUTHORIZATION_FAILED for every partition; topics: TOPIC_AUTHORIZATION_FAILED per partition (request split)", handle: on(handleOffsetCommit)},
		{key: kmsg.OffsetFetch, needs: []need{nd(OpDescribe, ResGroup, ""), nd(OpDescribe, ResTopic, "")},
			answer: "groups: GROUP_AUTHORIZATION_FAILED; listed topics: TOPIC_AUTHORIZATION_FAILED per partition; all-topics requests: hidden (batched v8+ split per group)", handle: on(handleOffsetFetch)},
		{key: kmsg.FindCoordinator, needs: []need{
			nd(OpDescribe, ResGroup, "key type group"),
			nd(OpDescribe, ResTransactionalID, "key type transaction"),
			nd(OpClusterAction, ResCluster, "key type share, broker-internal"),
		}, answer: "GROUP_/TRANSACTIONAL_ID_AUTHORIZATION_FAILED (per key in batched v4+, split)", handle: on(handleFindCoordinator)},
		groupRow(kmsg.JoinGroup, func(r *kmsg.JoinGroupRequest) string { return r.Group }),
		groupRow(kmsg.Heartbeat, func(r *kmsg.HeartbeatRequest) string { return r.Group }),
		groupRow(kmsg.LeaveGroup, func(r *kmsg.LeaveGroupRequest) string { return r.Group }),
		groupRow(kmsg.SyncGroup, func(r *kmsg.SyncGroupRequest) string { return r.Group }),
		{key: kmsg.DescribeGroups, needs: []need{nd(OpDescribe, ResGroup, ""), nd(OpDescribe, ResTopic, "topics a consumer group's members subscribe to or are assigned")},
			answer: "denied groups: GROUP_AUTHORIZATION_FAILED, no details (request split); a consumer group naming a hidden topic: TOPIC_AUTHORIZATION_FAILED, no details", handle: on(withAuthorizedOps(handleDescribeGroups))},
		{key: kmsg.ListGroups, needs: []need{nd(OpDescribe, ResCluster, "sees every group"), nd(OpDescribe, ResGroup, "otherwise, per group")},
			answer: "groups the principal may not describe are hidden", listing: true, handle: on(handleListGroups)},
		setupRow(kmsg.SASLHandshake),
		setupRow(kmsg.ApiVersions),
		{key: kmsg.CreateTopics, needs: []need{
			nd(OpCreate, ResCluster, "either pair"),
			nd(OpCreate, ResTopic, "either pair"),
			nd(OpDescribe, ResTopic, "kproxy: also needed, so that TOPIC_ALREADY_EXISTS never reveals a topic (as Metadata auto-creation)"),
		}, answer: "denied topics: TOPIC_AUTHORIZATION_FAILED; governance: POLICY_VIOLATION (request split)", handle: on(handleCreateTopics)},
		{key: kmsg.DeleteTopics, needs: []need{nd(OpDelete, ResTopic, ""), nd(OpDescribe, ResTopic, whenByID)},
			answer: "denied topics: TOPIC_AUTHORIZATION_FAILED (request split)", handle: on(handleDeleteTopics)},
		{key: kmsg.DeleteRecords, needs: []need{nd(OpDelete, ResTopic, "")},
			answer: answerTopicsSplit, handle: on(handleDeleteRecords)},
		{key: kmsg.InitProducerID, needs: []need{
			nd(OpWrite, ResTransactionalID, "transactional id set"),
			nd(OpIdempotentWrite, ResCluster, "no transactional id; either pair"),
			nd(OpWrite, ResTopic, "no transactional id; either pair: Write on any topic"),
		}, answer: "TRANSACTIONAL_ID_ or CLUSTER_AUTHORIZATION_FAILED", handle: on(handleInitProducerID)},
		{key: kmsg.OffsetForLeaderEpoch, needs: []need{
			nd(OpDescribe, ResTopic, "consumer"),
			nd(OpClusterAction, ResCluster, "follower: replica id >= 0"),
		}, answer: answerTopicsSplit, handle: on(handleOffsetForLeaderEpoch)},
		{key: kmsg.AddPartitionsToTxn, needs: []need{
			nd(OpWrite, ResTransactionalID, "v0-3, clients"),
			nd(OpWrite, ResTopic, "v0-3, clients"),
			nd(OpClusterAction, ResCluster, "v4+, brokers verifying"),
		}, answer: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED for all; denied topics TOPIC_AUTHORIZATION_FAILED, the rest OPERATION_NOT_ATTEMPTED (as Kafka: never split)", handle: on(handleAddPartitionsToTxn)},
		{key: kmsg.AddOffsetsToTxn, needs: []need{nd(OpWrite, ResTransactionalID, ""), nd(OpRead, ResGroup, "")},
			answer: "TRANSACTIONAL_ID_ or GROUP_AUTHORIZATION_FAILED", handle: on(handleAddOffsetsToTxn)},
		{key: kmsg.EndTxn, needs: []need{nd(OpWrite, ResTransactionalID, "")},
			answer: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", handle: on(handleEndTxn)},
		clusterItemsRow(kmsg.WriteTxnMarkers, OpClusterAction, "CLUSTER_AUTHORIZATION_FAILED per partition (broker-internal API)", denyWriteTxnMarkers),
		{key: kmsg.TxnOffsetCommit, needs: []need{nd(OpWrite, ResTransactionalID, ""), nd(OpRead, ResGroup, ""), nd(OpRead, ResTopic, ""), nd(OpDescribe, ResTopic, whenByID)},
			answer: "transactional id / group: error for every partition; topics: TOPIC_AUTHORIZATION_FAILED per partition (request split)", handle: on(handleTxnOffsetCommit)},
		clusterDescribe(kmsg.DescribeACLs),
		clusterItemsRow(kmsg.CreateACLs, OpAlter, "CLUSTER_AUTHORIZATION_FAILED per creation", denyCreateACLs),
		clusterItemsRow(kmsg.DeleteACLs, OpAlter, "CLUSTER_AUTHORIZATION_FAILED per filter", denyDeleteACLs),
		{key: kmsg.DescribeConfigs, needs: configNeeds(OpDescribeConfigs),
			answer: "denied resources: TOPIC_/CLUSTER_/GROUP_AUTHORIZATION_FAILED (request split)", handle: on(handleDescribeConfigs)},
		{key: kmsg.AlterConfigs, needs: configNeeds(OpAlterConfigs),
			answer: "denied resources: *_AUTHORIZATION_FAILED; governance: POLICY_VIOLATION (request split)", handle: on(handleAlterConfigs)},
		clusterItemsRow(kmsg.AlterReplicaLogDirs, OpAlter, "CLUSTER_AUTHORIZATION_FAILED per partition", denyAlterReplicaLogDirs),
		clusterItemsRow(kmsg.DescribeLogDirs, OpDescribe, "CLUSTER_AUTHORIZATION_FAILED (v3+; earlier versions get an empty answer, as from Kafka)", denyDescribeLogDirs),
		setupRow(kmsg.SASLAuthenticate),
		{key: kmsg.CreatePartitions, needs: []need{nd(OpAlter, ResTopic, "")},
			answer: "denied topics: TOPIC_AUTHORIZATION_FAILED; governance: POLICY_VIOLATION (request split)", handle: on(handleCreatePartitions)},
		// kproxy does not model Kafka's DelegationToken and User resource
		// types; it asks for the cluster permission instead, which is
		// stricter.
		clusterRow(kmsg.CreateDelegationToken, OpAlter, "kproxy: stands in for User/DelegationToken ACLs"),
		clusterRow(kmsg.RenewDelegationToken, OpAlter, "kproxy: stands in for DelegationToken ACLs"),
		clusterRow(kmsg.ExpireDelegationToken, OpAlter, "kproxy: stands in for DelegationToken ACLs"),
		clusterRow(kmsg.DescribeDelegationToken, OpDescribe, "kproxy: stands in for DelegationToken ACLs"),
		{key: kmsg.DeleteGroups, needs: []need{nd(OpDelete, ResGroup, "")},
			answer: "denied groups: GROUP_AUTHORIZATION_FAILED (request split)", handle: on(handleDeleteGroups)},
		clusterItemsRow(kmsg.ElectLeaders, OpAlter, "CLUSTER_AUTHORIZATION_FAILED (top-level and per partition)", denyElectLeaders),
		{key: kmsg.IncrementalAlterConfigs, needs: configNeeds(OpAlterConfigs),
			answer: "denied resources: *_AUTHORIZATION_FAILED; governance: POLICY_VIOLATION (request split)", handle: on(handleIncrementalAlterConfigs)},
		clusterAlter(kmsg.AlterPartitionAssignments),
		clusterDescribe(kmsg.ListPartitionReassignments),
		{key: kmsg.OffsetDelete, needs: []need{nd(OpDelete, ResGroup, ""), nd(OpRead, ResTopic, "")},
			answer: "group: GROUP_AUTHORIZATION_FAILED; topics: TOPIC_AUTHORIZATION_FAILED per partition (request split)", handle: on(handleOffsetDelete)},
		clusterRow(kmsg.DescribeClientQuotas, OpDescribeConfigs, ""),
		clusterItemsRow(kmsg.AlterClientQuotas, OpAlterConfigs, "CLUSTER_AUTHORIZATION_FAILED per entry", denyAlterClientQuotas),
		clusterDescribe(kmsg.DescribeUserSCRAMCredentials),
		clusterItemsRow(kmsg.AlterUserSCRAMCredentials, OpAlter, "CLUSTER_AUTHORIZATION_FAILED per user", denyAlterUserSCRAMCredentials),
		internal(kmsg.Vote),
		internal(kmsg.BeginQuorumEpoch),
		internal(kmsg.EndQuorumEpoch),
		clusterDescribe(kmsg.DescribeQuorum),
		internal(kmsg.AlterPartition),
		clusterAlter(kmsg.UpdateFeatures),
		internal(kmsg.Envelope),
		internal(kmsg.FetchSnapshot),
		{key: kmsg.DescribeCluster, answer: answerNone + ": like Metadata's broker list", handle: anyKey(withAuthorizedOps(noCheck))},
		{key: kmsg.DescribeProducers, needs: []need{nd(OpRead, ResTopic, "")},
			answer: answerTopicsSplit, handle: on(handleDescribeProducers)},
		internal(kmsg.BrokerRegistration),
		internal(kmsg.BrokerHeartbeat),
		clusterAlter(kmsg.UnregisterBroker),
		{key: kmsg.DescribeTransactions, needs: []need{nd(OpDescribe, ResTransactionalID, ""), nd(OpDescribe, ResTopic, "topics of a described transaction: hidden ones left out, as Kafka")},
			answer: "denied ids: TRANSACTIONAL_ID_AUTHORIZATION_FAILED (request split)", handle: on(handleDescribeTransactions)},
		{key: kmsg.ListTransactions, needs: []need{nd(OpDescribe, ResTransactionalID, "per transaction")},
			answer: "transactions the principal may not describe are hidden", listing: true, handle: on(handleListTransactions)},
		internal(kmsg.AllocateProducerIDs),
		{key: kmsg.ConsumerGroupHeartbeat, needs: []need{nd(OpRead, ResGroup, ""), nd(OpDescribe, ResTopic, "subscribed topic names; every topic for a regex subscription; assigned topics")},
			answer: answerGroupOrTopic, handle: on(handleConsumerGroupHeartbeat)},
		{key: kmsg.ConsumerGroupDescribe, needs: []need{nd(OpDescribe, ResGroup, ""), nd(OpDescribe, ResTopic, whenGroupTopics)},
			answer: answerGroupsSplit, handle: on(withAuthorizedOps(handleConsumerGroupDescribe))},
		internal(kmsg.ControllerRegistration),
		{key: kmsg.GetTelemetrySubscriptions, answer: answerNone, handle: anyKey(noCheck)},
		{key: kmsg.PushTelemetry, answer: answerNone, handle: anyKey(noCheck)},
		internal(kmsg.AssignReplicasToDirs),
		clusterRow(kmsg.ListConfigResources, OpDescribeConfigs, ""),
		{key: kmsg.DescribeTopicPartitions, needs: []need{nd(OpDescribe, ResTopic, "")},
			answer: "listed topics: TOPIC_AUTHORIZATION_FAILED (request split); all-topics requests: hidden", handle: on(withAuthorizedOps(handleDescribeTopicPartitions))},
		{key: kmsg.ShareGroupHeartbeat, needs: []need{nd(OpRead, ResGroup, ""), nd(OpDescribe, ResTopic, "subscribed topic names; assigned topics")},
			answer: answerGroupOrTopic, handle: on(handleShareGroupHeartbeat)},
		{key: kmsg.ShareGroupDescribe, needs: []need{nd(OpDescribe, ResGroup, ""), nd(OpDescribe, ResTopic, whenGroupTopics)},
			answer: answerGroupsSplit, handle: on(withAuthorizedOps(handleShareGroupDescribe))},
		{key: kmsg.ShareFetch, needs: []need{nd(OpRead, ResGroup, ""), nd(OpRead, ResTopic, ""), nd(OpDescribe, ResTopic, whenByID)},
			answer: "whole request: GROUP_ or TOPIC_AUTHORIZATION_FAILED (top-level)", handle: on(handleShareFetch)},
		{key: kmsg.ShareAcknowledge, needs: []need{nd(OpRead, ResGroup, ""), nd(OpRead, ResTopic, ""), nd(OpDescribe, ResTopic, whenByID)},
			answer: "whole request: GROUP_ or TOPIC_AUTHORIZATION_FAILED (top-level)", handle: on(handleShareAcknowledge)},
		clusterAlter(kmsg.AddRaftVoter),
		clusterAlter(kmsg.RemoveRaftVoter),
		internal(kmsg.UpdateRaftVoter),
		closedInternal(kmsg.InitializeShareGroupState),
		closedInternal(kmsg.ReadShareGroupState),
		closedInternal(kmsg.WriteShareGroupState),
		closedInternal(kmsg.DeleteShareGroupState),
		closedInternal(kmsg.ReadShareGroupStateSummary),
		{key: kmsg.StreamsGroupHeartbeat, needs: []need{nd(OpRead, ResGroup, ""), nd(OpDescribe, ResTopic, "topics the topology names; every topic for a source topic regex")},
			answer: answerGroupOrTopic, handle: on(handleStreamsGroupHeartbeat)},
		{key: kmsg.StreamsGroupDescribe, needs: []need{nd(OpDescribe, ResGroup, ""), nd(OpDescribe, ResTopic, whenGroupTopics)},
			answer: answerGroupsSplit, handle: on(withAuthorizedOps(handleStreamsGroupDescribe))},
		{key: kmsg.DescribeShareGroupOffsets, needs: []need{nd(OpDescribe, ResGroup, ""), nd(OpDescribe, ResTopic, "")},
			answer: "per group: GROUP_ or TOPIC_AUTHORIZATION_FAILED (request split by group)", handle: on(handleDescribeShareGroupOffsets)},
		{key: kmsg.AlterShareGroupOffsets, needs: []need{nd(OpRead, ResGroup, ""), nd(OpRead, ResTopic, "")},
			answer: answerTopLevel, handle: on(handleAlterShareGroupOffsets)},
		{key: kmsg.DeleteShareGroupOffsets, needs: []need{nd(OpDelete, ResGroup, ""), nd(OpRead, ResTopic, "")},
			answer: answerTopLevel, handle: on(handleDeleteShareGroupOffsets)},
		{key: kmsg.StreamsGroupTopologyDescriptionUpdate, needs: []need{nd(OpRead, ResGroup, ""), nd(OpDescribe, ResTopic, "kproxy: every topic the description names, as StreamsGroupHeartbeat's topology")},
			answer: answerGroupOrTopic, handle: on(handleStreamsGroupTopologyDescriptionUpdate)},
		clusterAlter(kmsg.UnregisterController),
	}
}

// tableByKey indexes the table by API key; keys it lacks are nil.
func tableByKey(table []apiEntry) []*apiEntry {
	maxKey := 0
	for _, e := range table {
		maxKey = max(maxKey, int(e.key))
	}
	idx := make([]*apiEntry, maxKey+1)
	for i := range table {
		idx[table[i].key] = &table[i]
	}
	return idx
}

// handler registers the enforcement of one row's API with the engine.
type handler func(e *Enforcer, r *filter.Registry, row *apiEntry)

// on is the handler of a row whose enforcement takes its request typed.
func on[R kmsg.Request](enforce func(*reqCtx, R) filter.Verdict) handler {
	return func(e *Enforcer, r *filter.Registry, row *apiEntry) {
		filter.OnRequest(r, func(conn *filter.Conn, req R) filter.Verdict { return decide(e, row, conn, req, enforce) },
			row.options(e)...)
	}
}

// anyKey is the handler of a row whose enforcement serves many APIs alike
// (cluster-wide checks, single-group APIs) and so takes the request
// untyped.
func anyKey(enforce func(*reqCtx, kmsg.Request) filter.Verdict) handler {
	return func(e *Enforcer, r *filter.Registry, row *apiEntry) {
		filter.OnRequestKey(r, int16(row.key), func(conn *filter.Conn, req kmsg.Request) filter.Verdict {
			return decide(e, row, conn, req, enforce)
		}, row.options(e)...)
	}
}

func (a *apiEntry) options(e *Enforcer) []filter.RequestOption {
	if a.decideRaw == nil {
		return nil
	}
	return []filter.RequestOption{filter.DecideRaw(func(conn *filter.Conn, version int16, body []byte) (filter.Verdict, bool) {
		return a.decideRaw(e, conn, version, body)
	})}
}
