package tenant

import "github.com/twmb/franz-go/pkg/kmsg"

// topicAPIs is the table of the topic-bearing APIs: Metadata and
// DescribeCluster (metadata.go), Produce and Fetch (produce.go, fetch.go),
// the offsets and topic admin APIs (topicadmin.go), configs (configs.go).
func topicAPIs() []api {
	return []api{
		apiVersionsAPI(), metadataAPI(), describeClusterAPI(), describeTopicPartitionsAPI(),
		produceAPI(), fetchAPI(),
		listOffsetsAPI(), offsetForLeaderEpochAPI(), deleteRecordsAPI(),
		createTopicsAPI(), deleteTopicsAPI(), createPartitionsAPI(),
		electLeadersAPI(), alterPartitionAssignmentsAPI(), listPartitionReassignmentsAPI(),
		describeProducersAPI(), describeLogDirsAPI(),
		describeConfigsAPI(), alterConfigsAPI(), incrementalAlterConfigsAPI(), listConfigResourcesAPI(),
	}
}

// key is kmsg's key as the table's type.
func key(k kmsg.Key) int16 { return int16(k) }
