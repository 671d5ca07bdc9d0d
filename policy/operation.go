package policy

import "github.com/kproxy/kproxy/internal/acl"

// The ACL vocabulary is package acl's. These aliases keep the names the
// handlers and the operation table spell (OpRead, ResTopic) until they are
// renamed to acl's; they define nothing of their own.
type (
	Operation    = acl.Operation
	ResourceType = acl.ResourceType
)

// The operations of Kafka's ACL model (opAll is only ever part of a rule),
// the resource types policy rules name, and the one cluster resource's name.
const (
	OpRead, OpWrite, OpCreate, OpDelete, OpAlter, OpDescribe = acl.Read, acl.Write, acl.Create, acl.Delete, acl.Alter, acl.Describe
	OpDescribeConfigs, OpAlterConfigs, OpIdempotentWrite     = acl.DescribeConfigs, acl.AlterConfigs, acl.IdempotentWrite
	OpClusterAction, opAll                                   = acl.ClusterAction, acl.All

	ResTopic, ResGroup, ResTransactionalID, ResCluster, numResourceTypes = acl.Topic, acl.Group, acl.TransactionalID, acl.Cluster, acl.NumResourceTypes

	ClusterName = acl.ClusterName
)

// opMask is a set of operations.
type opMask uint16

func maskOf(o Operation) opMask { return 1 << o }

const allOps opMask = 1<<OpRead | 1<<OpWrite | 1<<OpCreate | 1<<OpDelete | 1<<OpAlter | 1<<OpDescribe |
	1<<OpDescribeConfigs | 1<<OpAlterConfigs | 1<<OpIdempotentWrite | 1<<OpClusterAction

// withImplied adds what Kafka's authorizer lets an allowed operation imply:
// Read, Write, Delete or Alter imply Describe; AlterConfigs implies
// DescribeConfigs; All is everything. Denies imply nothing.
func (m opMask) withImplied() opMask {
	if m&maskOf(opAll) != 0 {
		return allOps
	}
	if m&(maskOf(OpRead)|maskOf(OpWrite)|maskOf(OpDelete)|maskOf(OpAlter)) != 0 {
		m |= maskOf(OpDescribe)
	}
	if m&maskOf(OpAlterConfigs) != 0 {
		m |= maskOf(OpDescribeConfigs)
	}
	return m
}

// denyMask expands All in a deny list; nothing else is implied.
func (m opMask) denyMask() opMask {
	if m&maskOf(opAll) != 0 {
		return allOps
	}
	return m
}
