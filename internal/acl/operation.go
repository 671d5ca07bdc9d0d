// Package acl is Kafka's ACL vocabulary as kproxy names it: the operations
// and resource types, each with the name the configuration file uses,
// Kafka's own name (as the audit log writes it) and its wire code. The
// configuration's validation and the policy enforcer both read it, so
// there is one definition of what an operation is.
package acl

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Operation is a Kafka ACL operation.
type Operation uint8

// The operations of Kafka's ACL model, in Kafka's ACL order. All is only
// ever part of a rule: it allows or denies every other operation.
const (
	Read Operation = iota + 1
	Write
	Create
	Delete
	Alter
	Describe
	DescribeConfigs
	AlterConfigs
	IdempotentWrite
	ClusterAction
	All
)

type operationRow struct {
	kafka, config string
	code          kmsg.ACLOperation
	appliesTo     []ResourceType
}

// operations is the one table of every operation: Kafka's name, the
// configuration's, Kafka's AclOperation code (as authorized_operations
// fields carry it), and the resource types a rule may grant it on.
var operations = [...]operationRow{
	Read:            {"Read", "read", kmsg.ACLOperationRead, []ResourceType{Topic, Group}},
	Write:           {"Write", "write", kmsg.ACLOperationWrite, []ResourceType{Topic, TransactionalID}},
	Create:          {"Create", "create", kmsg.ACLOperationCreate, []ResourceType{Topic, Cluster}},
	Delete:          {"Delete", "delete", kmsg.ACLOperationDelete, []ResourceType{Topic, Group}},
	Alter:           {"Alter", "alter", kmsg.ACLOperationAlter, []ResourceType{Topic, Cluster}},
	Describe:        {"Describe", "describe", kmsg.ACLOperationDescribe, allResourceTypes},
	DescribeConfigs: {"DescribeConfigs", "describe_configs", kmsg.ACLOperationDescribeConfigs, []ResourceType{Topic, Group, Cluster}},
	AlterConfigs:    {"AlterConfigs", "alter_configs", kmsg.ACLOperationAlterConfigs, []ResourceType{Topic, Group, Cluster}},
	IdempotentWrite: {"IdempotentWrite", "idempotent_write", kmsg.ACLOperationIdempotentWrite, []ResourceType{Cluster}},
	ClusterAction:   {"ClusterAction", "cluster_action", kmsg.ACLOperationClusterAction, []ResourceType{Cluster}},
	All:             {"All", "all", kmsg.ACLOperationAll, allResourceTypes},
}

func (o Operation) valid() bool { return o > 0 && int(o) < len(operations) }

// row is the operation's row of the table. An invalid operation's row
// names it Operation(N) for Kafka and nothing for the configuration, with
// code Unknown and no resource types.
func (o Operation) row() operationRow {
	if o.valid() {
		return operations[o]
	}
	return operationRow{kafka: fmt.Sprintf("Operation(%d)", uint8(o))}
}

// String is Kafka's name for the operation ("DescribeConfigs"), as the
// audit log and error messages write it.
func (o Operation) String() string { return o.row().kafka }

// ConfigName is the operation's name in a policy rule ("describe_configs");
// empty for an invalid operation.
func (o Operation) ConfigName() string { return o.row().config }

// Code is Kafka's AclOperation code of the operation; 0 (Unknown) for an
// invalid one.
func (o Operation) Code() kmsg.ACLOperation { return o.row().code }

// AppliesTo lists the resource types Kafka's ACL model defines the
// operation on: a rule granting it must name at least one of them.
func (o Operation) AppliesTo() []ResourceType { return o.row().appliesTo }

// Operations lists every operation, All last, in Kafka's ACL order.
func Operations() []Operation {
	ops := make([]Operation, 0, len(operations)-1)
	for op := Read; op.valid(); op++ {
		ops = append(ops, op)
	}
	return ops
}

// OperationNames lists every operation's ConfigName, in Operations' order:
// what a policy rule may write.
func OperationNames() []string {
	var names []string
	for _, op := range Operations() {
		names = append(names, op.ConfigName())
	}
	return names
}

// ParseOperation reads an operation as a rule writes it: its ConfigName
// or Kafka's spelling, case-insensitive, with or without the separating _
// or - ("describe_configs", "DescribeConfigs", "describe-configs").
func ParseOperation(s string) (Operation, bool) {
	flat := strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
	for _, op := range Operations() {
		if strings.ReplaceAll(op.ConfigName(), "_", "") == flat {
			return op, true
		}
	}
	return 0, false
}
