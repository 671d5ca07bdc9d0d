package policy

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Operation is a Kafka ACL operation.
type Operation uint8

// The operations of Kafka's ACL model. opAll is only ever part of a rule.
const (
	OpRead Operation = iota + 1
	OpWrite
	OpCreate
	OpDelete
	OpAlter
	OpDescribe
	OpDescribeConfigs
	OpAlterConfigs
	OpIdempotentWrite
	OpClusterAction
	opAll
)

// operationNames is the one table of every operation's names: Kafka's (as
// the audit log writes it), the configuration's, and Kafka's AclOperation
// code (as authorized_operations fields carry it).
var operationNames = [...]struct {
	kafka, config string
	acl           kmsg.ACLOperation
}{
	OpRead:            {"Read", "read", kmsg.ACLOperationRead},
	OpWrite:           {"Write", "write", kmsg.ACLOperationWrite},
	OpCreate:          {"Create", "create", kmsg.ACLOperationCreate},
	OpDelete:          {"Delete", "delete", kmsg.ACLOperationDelete},
	OpAlter:           {"Alter", "alter", kmsg.ACLOperationAlter},
	OpDescribe:        {"Describe", "describe", kmsg.ACLOperationDescribe},
	OpDescribeConfigs: {"DescribeConfigs", "describe_configs", kmsg.ACLOperationDescribeConfigs},
	OpAlterConfigs:    {"AlterConfigs", "alter_configs", kmsg.ACLOperationAlterConfigs},
	OpIdempotentWrite: {"IdempotentWrite", "idempotent_write", kmsg.ACLOperationIdempotentWrite},
	OpClusterAction:   {"ClusterAction", "cluster_action", kmsg.ACLOperationClusterAction},
	opAll:             {"All", "all", kmsg.ACLOperationAll},
}

// String is Kafka's name for the operation, as the audit log writes it.
func (o Operation) String() string {
	if o > 0 && int(o) < len(operationNames) {
		return operationNames[o].kafka
	}
	return fmt.Sprintf("Operation(%d)", uint8(o))
}

// aclCode is Kafka's AclOperation code of the operation.
func (o Operation) aclCode() int8 {
	if o > 0 && int(o) < len(operationNames) {
		return int8(operationNames[o].acl)
	}
	return 0
}

// operationByName maps config.Operations' canonical names.
func operationByName(name string) (Operation, bool) {
	for op := OpRead; int(op) < len(operationNames); op++ {
		if operationNames[op].config == name {
			return op, true
		}
	}
	return 0, false
}

// opMask is a set of operations.
type opMask uint16

func (o Operation) mask() opMask { return 1 << o }

const allOps opMask = 1<<OpRead | 1<<OpWrite | 1<<OpCreate | 1<<OpDelete | 1<<OpAlter | 1<<OpDescribe |
	1<<OpDescribeConfigs | 1<<OpAlterConfigs | 1<<OpIdempotentWrite | 1<<OpClusterAction

// withImplied adds what Kafka's authorizer lets an allowed operation imply:
// Read, Write, Delete or Alter imply Describe; AlterConfigs implies
// DescribeConfigs; All is everything. Denies imply nothing.
func (m opMask) withImplied() opMask {
	if m&opAll.mask() != 0 {
		return allOps
	}
	if m&(OpRead.mask()|OpWrite.mask()|OpDelete.mask()|OpAlter.mask()) != 0 {
		m |= OpDescribe.mask()
	}
	if m&OpAlterConfigs.mask() != 0 {
		m |= OpDescribeConfigs.mask()
	}
	return m
}

// denyMask expands All in a deny list; nothing else is implied.
func (m opMask) denyMask() opMask {
	if m&opAll.mask() != 0 {
		return allOps
	}
	return m
}

// ResourceType is a Kafka ACL resource type.
type ResourceType uint8

// The resource types policy rules name.
const (
	ResTopic ResourceType = iota
	ResGroup
	ResTransactionalID
	ResCluster
	numResourceTypes
)

// ClusterName is the name of the one cluster resource, as in Kafka.
const ClusterName = "kafka-cluster"

// String is Kafka's name for the resource type.
func (r ResourceType) String() string {
	switch r {
	case ResTopic:
		return "Topic"
	case ResGroup:
		return "Group"
	case ResTransactionalID:
		return "TransactionalId"
	case ResCluster:
		return "Cluster"
	}
	return fmt.Sprintf("ResourceType(%d)", uint8(r))
}

// deniedCode is the error code Kafka answers when an operation on a
// resource of type r is not authorized.
func (r ResourceType) deniedCode() int16 {
	switch r {
	case ResTopic:
		return errTopicAuthorizationFailed
	case ResGroup:
		return errGroupAuthorizationFailed
	case ResTransactionalID:
		return errTransactionalIDAuthorizationFailed
	}
	return errClusterAuthorizationFailed
}
