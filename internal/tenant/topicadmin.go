package tenant

import "github.com/twmb/franz-go/pkg/kmsg"

// The offsets and topic admin APIs name topics in a list of their own in
// both directions: names get the prefix on the way up, lose it on the way
// down, and what is not the tenant's is dropped; echoed error messages
// lose the prefixes.

func listOffsetsAPI() api {
	return api{
		key: key(kmsg.ListOffsets),
		request: simpleRequest(func(m *Mapper, r *kmsg.ListOffsetsRequest) {
			upTopics(m, r.Topics, func(t *kmsg.ListOffsetsRequestTopic) *string { return &t.Topic })
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.ListOffsetsResponse) error {
			r.Topics = downTopics(m, r.Topics, func(t *kmsg.ListOffsetsResponseTopic) *string { return &t.Topic })
			return nil
		}),
		fields: []string{"req.Topics.Topic", "resp.Topics.Topic"},
	}
}

func offsetForLeaderEpochAPI() api {
	return api{
		key: key(kmsg.OffsetForLeaderEpoch),
		request: simpleRequest(func(m *Mapper, r *kmsg.OffsetForLeaderEpochRequest) {
			upTopics(m, r.Topics, func(t *kmsg.OffsetForLeaderEpochRequestTopic) *string { return &t.Topic })
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.OffsetForLeaderEpochResponse) error {
			r.Topics = downTopics(m, r.Topics, func(t *kmsg.OffsetForLeaderEpochResponseTopic) *string { return &t.Topic })
			return nil
		}),
		fields: []string{"req.Topics.Topic", "resp.Topics.Topic"},
	}
}

func deleteRecordsAPI() api {
	return api{
		key: key(kmsg.DeleteRecords),
		request: simpleRequest(func(m *Mapper, r *kmsg.DeleteRecordsRequest) {
			upTopics(m, r.Topics, func(t *kmsg.DeleteRecordsRequestTopic) *string { return &t.Topic })
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.DeleteRecordsResponse) error {
			r.Topics = downTopics(m, r.Topics, func(t *kmsg.DeleteRecordsResponseTopic) *string { return &t.Topic })
			return nil
		}),
		fields: []string{"req.Topics.Topic", "resp.Topics.Topic"},
	}
}

func createTopicsAPI() api {
	return api{
		key: key(kmsg.CreateTopics),
		request: simpleRequest(func(m *Mapper, r *kmsg.CreateTopicsRequest) {
			upTopics(m, r.Topics, func(t *kmsg.CreateTopicsRequestTopic) *string { return &t.Topic })
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.CreateTopicsResponse) error {
			for _, t := range r.Topics {
				m.LearnTopicID(t.TopicID, t.Topic)
			}
			r.Topics = downTopics(m, r.Topics, func(t *kmsg.CreateTopicsResponseTopic) *string { return &t.Topic })
			for i := range r.Topics {
				r.Topics[i].TopicID = m.DownTopicID(r.Topics[i].TopicID)
				m.DownMessage(r.Topics[i].ErrorMessage)
			}
			return nil
		}),
		fields: []string{"req.Topics.Topic", "resp.Topics.Topic", "resp.Topics.TopicID"},
	}
}

// DeleteTopics names topics by name (v0-5 a list of names, v6+ also by
// id); another tenant's id is disguised: UNKNOWN_TOPIC_ID.
func deleteTopicsAPI() api {
	return api{
		key: key(kmsg.DeleteTopics),
		request: typedRequestCtx(func(c *mapCtx, r *kmsg.DeleteTopicsRequest) {
			for i := range r.TopicNames {
				r.TopicNames[i] = c.m.UpTopic(r.TopicNames[i])
			}
			for i := range r.Topics {
				c.m.upNullableTopic(&r.Topics[i].Topic)
				r.Topics[i].TopicID = c.upID(r.Topics[i].TopicID)
			}
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.DeleteTopicsResponse) error {
			kept := r.Topics[:0]
			for _, t := range r.Topics {
				if !m.downNullableTopic(&t.Topic) {
					continue
				}
				t.TopicID = m.DownTopicID(t.TopicID)
				m.DownMessage(t.ErrorMessage)
				kept = append(kept, t)
			}
			clear(r.Topics[len(kept):])
			r.Topics = kept
			return nil
		}),
		fields: []string{"req.TopicNames", "req.Topics.Topic", "req.Topics.TopicID", "resp.Topics.Topic", "resp.Topics.TopicID"},
	}
}

func createPartitionsAPI() api {
	return api{
		key: key(kmsg.CreatePartitions),
		request: simpleRequest(func(m *Mapper, r *kmsg.CreatePartitionsRequest) {
			upTopics(m, r.Topics, func(t *kmsg.CreatePartitionsRequestTopic) *string { return &t.Topic })
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.CreatePartitionsResponse) error {
			r.Topics = downTopics(m, r.Topics, func(t *kmsg.CreatePartitionsResponseTopic) *string { return &t.Topic })
			for i := range r.Topics {
				m.DownMessage(r.Topics[i].ErrorMessage)
			}
			return nil
		}),
		fields: []string{"req.Topics.Topic", "resp.Topics.Topic"},
	}
}

// ElectLeaders with no topics (null) means every partition of the
// cluster: for a tenant it becomes an empty list, electing nothing
// outside its own topics.
func electLeadersAPI() api {
	return api{
		key: key(kmsg.ElectLeaders),
		request: simpleRequest(func(m *Mapper, r *kmsg.ElectLeadersRequest) {
			if r.Topics == nil {
				r.Topics = []kmsg.ElectLeadersRequestTopic{}
			}
			upTopics(m, r.Topics, func(t *kmsg.ElectLeadersRequestTopic) *string { return &t.Topic })
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.ElectLeadersResponse) error {
			r.Topics = downTopics(m, r.Topics, func(t *kmsg.ElectLeadersResponseTopic) *string { return &t.Topic })
			for i := range r.Topics {
				for j := range r.Topics[i].Partitions {
					m.DownMessage(r.Topics[i].Partitions[j].ErrorMessage)
				}
			}
			return nil
		}),
		fields: []string{"req.Topics.Topic", "resp.Topics.Topic"},
	}
}

func alterPartitionAssignmentsAPI() api {
	return api{
		key: key(kmsg.AlterPartitionAssignments),
		request: simpleRequest(func(m *Mapper, r *kmsg.AlterPartitionAssignmentsRequest) {
			upTopics(m, r.Topics, func(t *kmsg.AlterPartitionAssignmentsRequestTopic) *string { return &t.Topic })
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.AlterPartitionAssignmentsResponse) error {
			m.DownMessage(r.ErrorMessage)
			r.Topics = downTopics(m, r.Topics, func(t *kmsg.AlterPartitionAssignmentsResponseTopic) *string { return &t.Topic })
			for i := range r.Topics {
				for j := range r.Topics[i].Partitions {
					m.DownMessage(r.Topics[i].Partitions[j].ErrorMessage)
				}
			}
			return nil
		}),
		fields: []string{"req.Topics.Topic", "resp.Topics.Topic"},
	}
}

// ListPartitionReassignments with no topics lists the whole cluster's: the
// answer keeps the tenant's.
func listPartitionReassignmentsAPI() api {
	return api{
		key: key(kmsg.ListPartitionReassignments),
		request: simpleRequest(func(m *Mapper, r *kmsg.ListPartitionReassignmentsRequest) {
			upTopics(m, r.Topics, func(t *kmsg.ListPartitionReassignmentsRequestTopic) *string { return &t.Topic })
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.ListPartitionReassignmentsResponse) error {
			m.DownMessage(r.ErrorMessage)
			r.Topics = downTopics(m, r.Topics, func(t *kmsg.ListPartitionReassignmentsResponseTopic) *string { return &t.Topic })
			return nil
		}),
		fields: []string{"req.Topics.Topic", "resp.Topics.Topic"},
	}
}

func describeProducersAPI() api {
	return api{
		key: key(kmsg.DescribeProducers),
		request: simpleRequest(func(m *Mapper, r *kmsg.DescribeProducersRequest) {
			upTopics(m, r.Topics, func(t *kmsg.DescribeProducersRequestTopic) *string { return &t.Topic })
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.DescribeProducersResponse) error {
			r.Topics = downTopics(m, r.Topics, func(t *kmsg.DescribeProducersResponseTopic) *string { return &t.Topic })
			for i := range r.Topics {
				for j := range r.Topics[i].Partitions {
					m.DownMessage(r.Topics[i].Partitions[j].ErrorMessage)
				}
			}
			return nil
		}),
		fields: []string{"req.Topics.Topic", "resp.Topics.Topic"},
	}
}

// DescribeLogDirs with no topics (null) describes every topic: the answer
// keeps the tenant's.
func describeLogDirsAPI() api {
	return api{
		key: key(kmsg.DescribeLogDirs),
		request: simpleRequest(func(m *Mapper, r *kmsg.DescribeLogDirsRequest) {
			upTopics(m, r.Topics, func(t *kmsg.DescribeLogDirsRequestTopic) *string { return &t.Topic })
		}),
		response: typedResponse(func(m *Mapper, r *kmsg.DescribeLogDirsResponse) error {
			for i := range r.Dirs {
				r.Dirs[i].Topics = downTopics(m, r.Dirs[i].Topics, func(t *kmsg.DescribeLogDirsResponseDirTopic) *string { return &t.Topic })
			}
			return nil
		}),
		fields: []string{"req.Topics.Topic", "resp.Dirs.Topics.Topic"},
	}
}
