package engine

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
)

// errorScope says which error codes of an API's responses
// kproxy_response_errors_total counts.
type errorScope uint8

const (
	errorScopeUnclassified errorScope = iota
	// errorsPerEntry: the top-level code and each topic's, partition's,
	// group's (any entry's) own code, so that a Produce denied per
	// partition counts once per partition.
	errorsPerEntry
	// errorsTopLevel: the response's one error code.
	errorsTopLevel
	// errorsNone: the response carries no error code.
	errorsNone
)

// responseErrorScope classifies key's responses. Every key kmsg knows has
// a class (TestEveryAPIHasAnErrorScope), so a new API cannot go uncounted
// unnoticed.
func responseErrorScope(key int16) errorScope {
	switch kmsg.Key(key) {
	case kmsg.Produce, kmsg.Fetch, kmsg.ListOffsets, kmsg.Metadata, kmsg.LeaderAndISR, kmsg.StopReplica,
		kmsg.OffsetCommit, kmsg.OffsetFetch, kmsg.FindCoordinator, kmsg.LeaveGroup, kmsg.DescribeGroups,
		kmsg.CreateTopics, kmsg.DeleteTopics, kmsg.DeleteRecords, kmsg.OffsetForLeaderEpoch,
		kmsg.AddPartitionsToTxn, kmsg.WriteTxnMarkers, kmsg.TxnOffsetCommit, kmsg.CreateACLs,
		kmsg.DeleteACLs, kmsg.DescribeConfigs, kmsg.AlterConfigs, kmsg.AlterReplicaLogDirs,
		kmsg.DescribeLogDirs, kmsg.CreatePartitions, kmsg.DeleteGroups, kmsg.ElectLeaders,
		kmsg.IncrementalAlterConfigs, kmsg.AlterPartitionAssignments, kmsg.OffsetDelete,
		kmsg.AlterClientQuotas, kmsg.DescribeUserSCRAMCredentials, kmsg.AlterUserSCRAMCredentials,
		kmsg.Vote, kmsg.BeginQuorumEpoch, kmsg.EndQuorumEpoch, kmsg.DescribeQuorum, kmsg.AlterPartition,
		kmsg.UpdateFeatures, kmsg.FetchSnapshot, kmsg.DescribeProducers, kmsg.DescribeTransactions,
		kmsg.ConsumerGroupDescribe, kmsg.AssignReplicasToDirs, kmsg.DescribeTopicPartitions,
		kmsg.ShareGroupDescribe, kmsg.ShareFetch, kmsg.ShareAcknowledge, kmsg.InitializeShareGroupState,
		kmsg.ReadShareGroupState, kmsg.WriteShareGroupState, kmsg.DeleteShareGroupState,
		kmsg.ReadShareGroupStateSummary, kmsg.StreamsGroupDescribe, kmsg.DescribeShareGroupOffsets,
		kmsg.AlterShareGroupOffsets, kmsg.DeleteShareGroupOffsets:
		return errorsPerEntry
	case kmsg.UpdateMetadata, kmsg.ControlledShutdown, kmsg.JoinGroup, kmsg.Heartbeat, kmsg.SyncGroup,
		kmsg.ListGroups, kmsg.SASLHandshake, kmsg.ApiVersions, kmsg.InitProducerID, kmsg.AddOffsetsToTxn,
		kmsg.EndTxn, kmsg.DescribeACLs, kmsg.SASLAuthenticate, kmsg.CreateDelegationToken,
		kmsg.RenewDelegationToken, kmsg.ExpireDelegationToken, kmsg.DescribeDelegationToken,
		kmsg.ListPartitionReassignments, kmsg.DescribeClientQuotas, kmsg.Envelope, kmsg.DescribeCluster,
		kmsg.BrokerRegistration, kmsg.BrokerHeartbeat, kmsg.UnregisterBroker, kmsg.ListTransactions,
		kmsg.AllocateProducerIDs, kmsg.ConsumerGroupHeartbeat, kmsg.ControllerRegistration,
		kmsg.GetTelemetrySubscriptions, kmsg.PushTelemetry, kmsg.ListConfigResources,
		kmsg.ShareGroupHeartbeat, kmsg.AddRaftVoter, kmsg.RemoveRaftVoter, kmsg.UpdateRaftVoter,
		kmsg.StreamsGroupHeartbeat, kmsg.StreamsGroupTopologyDescriptionUpdate,
		kmsg.UnregisterController:
		return errorsTopLevel
	}
	return errorScopeUnclassified
}

// entryErrorCodes hands errs each non-zero ErrorCode of resp's entries
// (topics, partitions, groups, ...), at any depth, when its API counts per
// entry; the top-level code is left to topLevelErrorCode. Only for
// responses kproxy has decoded anyway: record batches are bytes and are
// not walked.
func entryErrorCodes(resp kmsg.Response, errs wire.ErrorNoter) {
	if responseErrorScope(resp.Key()) != errorsPerEntry {
		return
	}
	v := reflect.ValueOf(resp)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct {
		walkEntryErrors(v, errs)
	}
}

// walkEntryErrors visits the entries held in struct v's fields: each
// element of a slice of structs, and each nested struct.
func walkEntryErrors(v reflect.Value, errs wire.ErrorNoter) {
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				continue
			}
			f = f.Elem()
		}
		switch {
		case f.Kind() == reflect.Struct:
			visitEntry(f, errs)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			for j := 0; j < f.Len(); j++ {
				visitEntry(f.Index(j), errs)
			}
		}
	}
}

func visitEntry(v reflect.Value, errs wire.ErrorNoter) {
	if !v.CanInterface() {
		return // unexported: kmsg.Tags' internals
	}
	if code := v.FieldByName("ErrorCode"); code.IsValid() && code.Kind() == reflect.Int16 && code.Int() != 0 {
		errs.NoteError(int16(code.Int()))
	}
	walkEntryErrors(v, errs)
}
