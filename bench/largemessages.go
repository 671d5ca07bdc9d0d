package bench

import (
	"context"
	"fmt"
)

// largeHeaderTrigger is the header that offloads a record whatever its
// size (KafScale's trigger). The bench's records carry no header: the
// filter checks for it and finds none.
const largeHeaderTrigger = "LFS_BLOB"

// largeThreshold is the kproxy-large-messages target's threshold_bytes:
// above the bench's record size, so that nothing is offloaded and the
// target measures the filter configured but not triggered.
func largeThreshold(o *Options) int {
	return max(1<<20, 2*o.RecordBytes)
}

// largeMessagesYAML is a large_messages section offloading the values of
// topic above threshold (and those of records with the trigger header) to
// the bench's store, resolving pointers on fetch.
func largeMessagesYAML(endpoint, topic string, threshold int) string {
	return fmt.Sprintf("large_messages:\n"+
		"  store:\n    s3: {endpoint: %q, bucket: %s, region: %s, path_style: true}\n"+
		"  topics:\n    - {match: %q, threshold_bytes: %d, header_trigger: %s}\n"+
		"  resolve_on_fetch: true\n  pointer_format: kafscale\n",
		endpoint, largeBucket, largeRegion, topic, threshold, largeHeaderTrigger)
}

// largeMessagesNote says how many objects the store holds after the
// loads: none, if the filter was never triggered, as the target means.
func largeMessagesNote(ctx context.Context, s *store, threshold int) string {
	n, err := s.objectCount(ctx)
	if err != nil {
		return "objects in the store not counted: " + err.Error()
	}
	return fmt.Sprintf("%d objects in the store after the loads (threshold_bytes %d, no record with the %s header: nothing to offload)",
		n, threshold, largeHeaderTrigger)
}
