package policy

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// Coordinator key types of FindCoordinator.
const (
	coordinatorGroup       = 0
	coordinatorTransaction = 1
	coordinatorShare       = 2
)

// checkCoordinatorKey decides one FindCoordinator key: Describe on the
// group or transactional id it names. Share-coordinator keys are looked up
// by brokers only.
func checkCoordinatorKey(c *reqCtx, keyType int8, key string) *denial {
	switch keyType {
	case coordinatorGroup:
		return c.check(OpDescribe, ResGroup, key)
	case coordinatorTransaction:
		return c.check(OpDescribe, ResTransactionalID, key)
	}
	return c.checkCluster(OpClusterAction)
}

// handleFindCoordinator enforces Describe on each key; batched requests
// (v4+) are split per key.
func handleFindCoordinator(c *reqCtx, r *kmsg.FindCoordinatorRequest) filter.Verdict {
	if r.Version < 4 {
		if d := checkCoordinatorKey(c, r.CoordinatorType, r.CoordinatorKey); d != nil {
			resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
			resp.ErrorCode, resp.ErrorMessage = d.code, d.msgPtr()
			resp.NodeID, resp.Port = -1, -1
			return filter.Verdict{Respond: resp}
		}
		return filter.Verdict{}
	}
	orig := r.CoordinatorKeys
	denials := make([]*denial, len(orig))
	denied := 0
	for i, k := range orig {
		if denials[i] = checkCoordinatorKey(c, r.CoordinatorType, k); denials[i] != nil {
			denied++
		}
	}
	if denied == 0 {
		return filter.Verdict{}
	}
	return c.split(r, denied == len(orig), func() { r.CoordinatorKeys = keepAllowed(orig, denials) }, filter.Then(func(fr *kmsg.FindCoordinatorResponse) error {
		fr.Coordinators = mergeInOrder(fr.Coordinators, func(co *kmsg.FindCoordinatorResponseCoordinator) string { return co.Key }, orig,
			func(i int) (kmsg.FindCoordinatorResponseCoordinator, bool) {
				d, ok := denialAt(denials, i)
				if !ok {
					return kmsg.FindCoordinatorResponseCoordinator{}, false
				}
				co := kmsg.NewFindCoordinatorResponseCoordinator()
				co.Key, co.NodeID, co.Port = orig[i], -1, -1
				co.ErrorCode, co.ErrorMessage = d.code, d.msgPtr()
				return co, true
			})
		return nil
	}))
}

// splitNamed is the shape of the APIs that list resources of type rt by
// name and answer an entry per name: denied names are removed from the
// request and answered with synth.
func splitNamed[T any, Resp kmsg.Response](c *reqCtx, req kmsg.Request, names *[]string, op Operation, rt ResourceType,
	respList func(Resp) *[]T, keyOf func(*T) string, synth func(name string, d *denial) T) filter.Verdict {
	l := listing[string, string, T, Resp]{items: names, key: func(name *string) string { return *name }, respItems: respList, respKey: keyOf,
		denied: func(name *string, d *denial) T { return synth(*name, d) }}
	return splitEach(c, req, l, func(name *string) *denial { return c.check(op, rt, *name) })
}

// splitGroups is splitNamed for the group APIs, whose response entries
// (T) name their group in the string field nameField and carry an error
// code and message.
func splitGroups[T any, Resp kmsg.Response](c *reqCtx, req kmsg.Request, groups *[]string, op Operation,
	respList func(Resp) *[]T, nameField string) filter.Verdict {
	return splitNamed(c, req, groups, op, ResGroup, respList,
		func(g *T) string { return reflect.ValueOf(g).Elem().FieldByName(nameField).String() },
		func(group string, d *denial) T { return entryAnswering[T](nameField, group, d) })
}

func handleDescribeGroups(c *reqCtx, r *kmsg.DescribeGroupsRequest) filter.Verdict {
	groups := func(dr *kmsg.DescribeGroupsResponse) *[]kmsg.DescribeGroupsResponseGroup { return &dr.Groups }
	return describedClassicGroupTopics(c, splitGroups(c, r, &r.Groups, OpDescribe, groups, "Group"))
}

func handleDeleteGroups(c *reqCtx, r *kmsg.DeleteGroupsRequest) filter.Verdict {
	groups := func(dr *kmsg.DeleteGroupsResponse) *[]kmsg.DeleteGroupsResponseGroup { return &dr.Groups }
	return splitGroups(c, r, &r.Groups, OpDelete, groups, "Group")
}

func handleConsumerGroupDescribe(c *reqCtx, r *kmsg.ConsumerGroupDescribeRequest) filter.Verdict {
	groups := func(dr *kmsg.ConsumerGroupDescribeResponse) *[]kmsg.ConsumerGroupDescribeResponseGroup {
		return &dr.Groups
	}
	return hideGroupsNamingHiddenTopics(c, splitGroups(c, r, &r.Groups, OpDescribe, groups, "Group"), groups, "Group")
}

func handleShareGroupDescribe(c *reqCtx, r *kmsg.ShareGroupDescribeRequest) filter.Verdict {
	groups := func(dr *kmsg.ShareGroupDescribeResponse) *[]kmsg.ShareGroupDescribeResponseGroup { return &dr.Groups }
	return hideGroupsNamingHiddenTopics(c, splitGroups(c, r, &r.GroupIDs, OpDescribe, groups, "GroupID"), groups, "GroupID")
}

func handleStreamsGroupDescribe(c *reqCtx, r *kmsg.StreamsGroupDescribeRequest) filter.Verdict {
	groups := func(dr *kmsg.StreamsGroupDescribeResponse) *[]kmsg.StreamsGroupDescribeResponseGroup {
		return &dr.Groups
	}
	return hideGroupsNamingHiddenTopics(c, splitGroups(c, r, &r.Groups, OpDescribe, groups, "Group"), groups, "Group")
}

// handleListGroups: Describe on the cluster sees every group; otherwise
// the answer lists only the groups the principal may describe, as Kafka
// filters it.
func handleListGroups(c *reqCtx, r *kmsg.ListGroupsRequest) filter.Verdict {
	if c.forced == nil {
		if d := c.decide(OpDescribe, ResCluster, ClusterName); d.Allowed {
			c.record(OpDescribe, ResCluster, ClusterName, d)
			return filter.Verdict{}
		}
	}
	return filter.Verdict{OnResponse: filter.Then(func(lr *kmsg.ListGroupsResponse) error {
		lr.Groups = keepOnly(lr.Groups, func(g kmsg.ListGroupsResponseGroup) bool { return c.visible(OpDescribe, ResGroup, g.Group) })
		return nil
	})}
}

// checkTopicsDescribe decides Describe on each named topic and returns a
// denial naming every denied one, for APIs that refuse a whole request
// over any (the group heartbeats).
func checkTopicsDescribe(c *reqCtx, op Operation, topics []string) *denial {
	var bad []string
	var first *denial
	for _, t := range topics {
		if d := c.check(op, ResTopic, t); d != nil {
			bad = append(bad, t)
			if first == nil {
				first = d
			}
		}
	}
	if first == nil || c.forced != nil {
		return first
	}
	return &denial{code: first.code, msg: fmt.Sprintf("kproxy policy: %s on topics %s denied to %s", op, strings.Join(bad, ", "), c.prin)}
}

// handleConsumerGroupHeartbeat enforces Read on the group and Describe on
// each subscribed topic name, with the top-level error Kafka uses. A regex
// subscription needs Describe on every topic, and an assignment naming a
// hidden topic is refused (groupheartbeat.go).
func handleConsumerGroupHeartbeat(c *reqCtx, r *kmsg.ConsumerGroupHeartbeatRequest) filter.Verdict {
	return groupHeartbeat[*kmsg.ConsumerGroupHeartbeatResponse](c, r, r.Group, r.SubscribedTopicNames, r.SubscribedTopicRegex)
}

func handleShareGroupHeartbeat(c *reqCtx, r *kmsg.ShareGroupHeartbeatRequest) filter.Verdict {
	return groupHeartbeat[*kmsg.ShareGroupHeartbeatResponse](c, r, r.GroupID, r.SubscribedTopicNames, nil)
}

// handleStreamsGroupHeartbeat enforces Read on the group and Describe on
// every topic the topology names; a source topic regex, which the broker
// resolves over every topic, needs Describe on every topic, as a consumer
// group's regex subscription does (groupheartbeat.go).
func handleStreamsGroupHeartbeat(c *reqCtx, r *kmsg.StreamsGroupHeartbeatRequest) filter.Verdict {
	if d := c.check(OpRead, ResGroup, r.Group); d != nil {
		return denyTopLevel(r, d)
	}
	var topics []string
	if r.Topology != nil {
		for _, s := range r.Topology.Subtopologies {
			for _, re := range s.SourceTopicRegex {
				if d := c.checkRegexSubscription("SourceTopicRegex", &re); d != nil {
					return denyTopLevel(r, d)
				}
			}
			topics = append(topics, s.SourceTopics...)
			topics = append(topics, s.RepartitionSinkTopics...)
			for _, t := range s.StateChangelogTopics {
				topics = append(topics, t.Topic)
			}
			for _, t := range s.RepartitionSourceTopics {
				topics = append(topics, t.Topic)
			}
		}
	}
	if d := checkTopicsDescribe(c, OpDescribe, topics); d != nil {
		return denyTopLevel(r, d)
	}
	return filter.Verdict{}
}

// handleStreamsGroupTopologyDescriptionUpdate enforces Read on the group
// and, as for the topology a StreamsGroupHeartbeat sends, Describe on every
// topic the description names: the cluster keeps it and shows it to the
// group's describers, so a member may not put there names it may not see.
func handleStreamsGroupTopologyDescriptionUpdate(c *reqCtx, r *kmsg.StreamsGroupTopologyDescriptionUpdateRequest) filter.Verdict {
	if d := c.check(OpRead, ResGroup, r.Group); d != nil {
		return denyTopLevel(r, d)
	}
	var topics []string
	topicRefs(&r.TopologyDescription, func(name string, _ [16]byte) bool {
		if name != "" {
			topics = append(topics, name)
		}
		return true
	})
	if d := checkTopicsDescribe(c, OpDescribe, topics); d != nil {
		return denyTopLevel(r, d)
	}
	return filter.Verdict{}
}

// handleShareFetch enforces Read on the share group and on every topic;
// any denial refuses the whole request with the top-level error code. The
// topics of the share session the request does not name are decided on
// its response (fetch_share.go).
func handleShareFetch(c *reqCtx, r *kmsg.ShareFetchRequest) filter.Verdict {
	v := groupThenTopics(c, r, OpRead, deref(r.GroupID), len(r.Topics), func(i int) *denial { return c.readTopicByID(r.Topics[i].TopicID) })
	if v.Respond == nil && v.Close == nil {
		v.OnResponse = c.checkShareFetchResponse(r)
	}
	return v
}

func handleShareAcknowledge(c *reqCtx, r *kmsg.ShareAcknowledgeRequest) filter.Verdict {
	return groupThenTopics(c, r, OpRead, deref(r.GroupID), len(r.Topics), func(i int) *denial { return c.readTopicByID(r.Topics[i].TopicID) })
}

// handleAlterShareGroupOffsets enforces Read on the group and each topic.
func handleAlterShareGroupOffsets(c *reqCtx, r *kmsg.AlterShareGroupOffsetsRequest) filter.Verdict {
	return groupThenTopics(c, r, OpRead, r.GroupID, len(r.Topics), func(i int) *denial { return c.check(OpRead, ResTopic, r.Topics[i].Topic) })
}

// handleDeleteShareGroupOffsets enforces Delete on the group and Read on
// each topic.
func handleDeleteShareGroupOffsets(c *reqCtx, r *kmsg.DeleteShareGroupOffsetsRequest) filter.Verdict {
	return groupThenTopics(c, r, OpDelete, r.GroupID, len(r.Topics), func(i int) *denial { return c.check(OpRead, ResTopic, r.Topics[i].Topic) })
}

// groupThenTopics enforces op on req's group, then decides each of its n
// topics with topicDenial; the first denial refuses the whole request with
// the top-level error code.
func groupThenTopics(c *reqCtx, req kmsg.Request, op Operation, group string, n int, topicDenial func(i int) *denial) filter.Verdict {
	if d := c.check(op, ResGroup, group); d != nil {
		return denyTopLevel(req, d)
	}
	for i := range n {
		if d := topicDenial(i); d != nil {
			return denyTopLevel(req, d)
		}
	}
	return filter.Verdict{}
}

// readTopicByID decides Read on a topic named by id (checkTopicRef).
func (c *reqCtx) readTopicByID(id [16]byte) *denial {
	return c.checkTopicRef("", id, func(name string) *denial { return c.check(OpRead, ResTopic, name) })
}

// handleDescribeShareGroupOffsets enforces Describe on each group and on
// the topics listed for it; a group with any denied topic is answered
// with that error, the others go upstream.
func handleDescribeShareGroupOffsets(c *reqCtx, r *kmsg.DescribeShareGroupOffsetsRequest) filter.Verdict {
	orig := r.Groups
	keys := make([]string, len(orig))
	denials := make([]*denial, len(orig))
	denied := 0
	for i, g := range orig {
		keys[i] = g.GroupID
		d := c.check(OpDescribe, ResGroup, g.GroupID)
		for j := 0; d == nil && j < len(g.Topics); j++ {
			d = c.check(OpDescribe, ResTopic, g.Topics[j].Topic)
		}
		if denials[i] = d; d != nil {
			denied++
		}
	}
	if denied == 0 {
		return describeShareGroupAllTopics(c, r, filter.Verdict{})
	}
	return describeShareGroupAllTopics(c, r, c.split(r, denied == len(orig), func() { r.Groups = keepAllowed(orig, denials) }, filter.Then(func(dr *kmsg.DescribeShareGroupOffsetsResponse) error {
		dr.Groups = mergeInOrder(dr.Groups, func(g *kmsg.DescribeShareGroupOffsetsResponseGroup) string { return g.GroupID }, keys,
			func(i int) (kmsg.DescribeShareGroupOffsetsResponseGroup, bool) {
				d, ok := denialAt(denials, i)
				if !ok {
					return kmsg.DescribeShareGroupOffsetsResponseGroup{}, false
				}
				g := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
				g.GroupID, g.ErrorCode, g.ErrorMessage = keys[i], d.code, d.msgPtr()
				return g, true
			})
		return nil
	})))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
