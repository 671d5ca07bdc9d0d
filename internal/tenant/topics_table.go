package tenant

// topicAPIs is the table of the topic-bearing APIs (Metadata, Produce,
// Fetch, ListOffsets, topic admin, configs ...).
func topicAPIs() []api {
	return nil // filled in by the vc-topics branch
}
