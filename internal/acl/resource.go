package acl

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
)

// ResourceType is a Kafka ACL resource type. Its values run from 0 to
// NumResourceTypes-1, so tables can be arrays indexed by it.
type ResourceType uint8

// The resource types policy rules name.
const (
	Topic ResourceType = iota
	Group
	TransactionalID
	Cluster
	// NumResourceTypes is how many resource types there are.
	NumResourceTypes
)

// allResourceTypes is every resource type, in order.
var allResourceTypes = []ResourceType{Topic, Group, TransactionalID, Cluster}

// ClusterName is the name of the one cluster resource, as in Kafka.
const ClusterName = "kafka-cluster"

type resourceRow struct {
	kafka, config string
	code          kmsg.ACLResourceType
	denied        wire.ErrorCode
	authorizedOps []Operation
}

// resourceTypes is the one table of every resource type: Kafka's name,
// the configuration key a rule lists its patterns under, Kafka's
// ResourceType code, the error code Kafka answers when an operation on a
// resource of the type is not authorized, and the operations an
// authorized_operations field reports for it.
var resourceTypes = [NumResourceTypes]resourceRow{
	Topic: {"Topic", "topics", kmsg.ACLResourceTypeTopic, wire.ErrCodeTopicAuthorizationFailed,
		[]Operation{Read, Write, Create, Describe, Delete, Alter, DescribeConfigs, AlterConfigs}},
	Group: {"Group", "groups", kmsg.ACLResourceTypeGroup, wire.ErrCodeGroupAuthorizationFailed,
		[]Operation{Read, Describe, Delete}},
	TransactionalID: {"TransactionalId", "transactional_ids", kmsg.ACLResourceTypeTransactionalId, wire.ErrCodeTransactionalIDAuthorizationFailed,
		nil},
	Cluster: {"Cluster", "cluster", kmsg.ACLResourceTypeCluster, wire.ErrCodeClusterAuthorizationFailed,
		[]Operation{Create, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, Alter, Describe}},
}

func (r ResourceType) valid() bool { return r < NumResourceTypes }

// row is the type's row of the table. An invalid type's row names it
// ResourceType(N) for Kafka and nothing for the configuration, with code
// Unknown, no operations, and the cluster's denial code.
func (r ResourceType) row() resourceRow {
	if r.valid() {
		return resourceTypes[r]
	}
	return resourceRow{kafka: fmt.Sprintf("ResourceType(%d)", uint8(r)), denied: wire.ErrCodeClusterAuthorizationFailed}
}

// String is Kafka's name for the resource type ("TransactionalId").
func (r ResourceType) String() string { return r.row().kafka }

// ConfigKey is the key of a policy rule that names resources of the type
// ("transactional_ids"; "cluster" is a boolean); empty for an invalid type.
func (r ResourceType) ConfigKey() string { return r.row().config }

// Code is Kafka's ResourceType code; 0 (Unknown) for an invalid type.
func (r ResourceType) Code() kmsg.ACLResourceType { return r.row().code }

// DeniedCode is the error code Kafka answers when an operation on a
// resource of the type is not authorized.
func (r ResourceType) DeniedCode() wire.ErrorCode { return r.row().denied }

// AuthorizedOperations is the operations Kafka reports, in an
// authorized_operations field, whether a principal may perform on a
// resource of the type (none for transactional ids: no response reports
// them).
func (r ResourceType) AuthorizedOperations() []Operation { return r.row().authorizedOps }

// ResourceTypes lists every resource type, in order.
func ResourceTypes() []ResourceType { return append([]ResourceType(nil), allResourceTypes...) }
