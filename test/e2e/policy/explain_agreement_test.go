package e2epolicy

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/acl"
	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/policy"
)

// The vocabulary the generated policies and questions draw from: names
// the rules' patterns match, and names none does.
var (
	agreeUsers     = []string{"alice", "bob", "carol", "mallory"}
	agreeClientIDs = []string{"etl-1", "app"}
	agreeNames     = map[acl.ResourceType][]string{
		acl.Topic:           {"orders", "orders.eu", "payments", "logs-12", "other"},
		acl.Group:           {"g1", "grp-a", "other"},
		acl.TransactionalID: {"tx-1", "app-tx", "other"},
		acl.Cluster:         {acl.ClusterName},
	}
	agreePatterns = map[acl.ResourceType][]string{
		acl.Topic:           {"orders", "orders*", "pay*", "*", "re:^logs-[0-9]+$", "*.eu"},
		acl.Group:           {"g1", "grp-*", "*"},
		acl.TransactionalID: {"tx-*", "app-tx", "*"},
	}
	agreePrincipals = []string{"User:alice", "User:bob", "User:c*", "client_id:etl-*", "cidr:127.0.0.0/8", "cidr:10.0.0.0/8", "*"}
	// agreeOps are the questions a request below asks alone, per resource
	// type (create is asked through CreateTopics, with its partners).
	agreeOps = map[acl.ResourceType][]acl.Operation{
		acl.Topic:           {acl.Read, acl.Write, acl.Create, acl.Delete, acl.Alter, acl.Describe, acl.DescribeConfigs, acl.AlterConfigs},
		acl.Group:           {acl.Read, acl.Describe, acl.Delete},
		acl.TransactionalID: {acl.Write, acl.Describe},
		acl.Cluster:         {acl.Alter, acl.Describe, acl.DescribeConfigs, acl.AlterConfigs},
	}
)

// agreementPolicy generates a policy of n rules from rng: each grants or
// denies operations of one resource type to one or two principals.
func agreementPolicy(rng *rand.Rand, n int) string {
	var b strings.Builder
	def := []string{"deny", "allow"}[rng.IntN(4)/3]
	fmt.Fprintf(&b, "policy:\n  default: %s\n  rules:\n", def)
	types := []acl.ResourceType{acl.Topic, acl.Topic, acl.Group, acl.TransactionalID, acl.Cluster}
	for i := range n {
		rt := types[rng.IntN(len(types))]
		var ops []string
		for _, op := range acl.Operations() {
			if slices.Contains(op.AppliesTo(), rt) && rng.IntN(3) == 0 {
				ops = append(ops, op.ConfigName())
			}
		}
		if len(ops) == 0 {
			ops = []string{"describe"}
		}
		principals := []string{agreePrincipals[rng.IntN(len(agreePrincipals))]}
		if rng.IntN(3) == 0 {
			principals = append(principals, agreePrincipals[rng.IntN(len(agreePrincipals))])
		}
		verb := "allow"
		if rng.IntN(4) == 0 {
			verb = "deny"
		}
		fmt.Fprintf(&b, "    - {name: r%d, principals: [%s], %s: [%s], ", i, quoteAll(principals), verb, strings.Join(ops, ", "))
		if rt == acl.Cluster {
			b.WriteString("cluster: true}\n")
			continue
		}
		pats := agreePatterns[rt]
		fmt.Fprintf(&b, "%s: [%s]}\n", rt.ConfigKey(), quoteAll([]string{pats[rng.IntN(len(pats))], pats[rng.IntN(len(pats))]}))
	}
	return b.String()
}

// clientAddr is where the test's connections come from: kproxy listens on
// 127.0.0.1.
var clientAddr = netip.MustParseAddr("127.0.0.1")

func quoteAll(list []string) string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(out, ", ")
}

// agreeQuestion is one generated question and the request that asks it.
type agreeQuestion struct {
	user, clientID string
	op             acl.Operation
	rt             acl.ResourceType
	name           string
}

func (q agreeQuestion) String() string {
	return fmt.Sprintf("User:%s (client id %s) %s %s %s", q.user, q.clientID, q.op.ConfigName(), q.rt.ConfigKey(), q.name)
}

// TestExplainAgreesWithTheDataPath: for generated policies and a few
// hundred generated questions each, the decision `policy explain` gives
// (through the Checker, from the same file) is the one kproxy enforces on
// a real request of that operation, sent by that principal through kproxy
// (proxy.Run, SASL PLAIN users) in front of kfake. The request allowed
// reaches kfake, whatever it answers; the one denied is answered with the
// resource type's authorization error.
func TestExplainAgreesWithTheDataPath(t *testing.T) {
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "orders", "payments"))
	var creds []string
	for _, u := range agreeUsers {
		cred, err := auth.HashPassword(auth.ScramSHA512, u+"-secret", 4096)
		if err != nil {
			t.Fatal(err)
		}
		creds = append(creds, fmt.Sprintf("{name: %s, credentials: [%q]}", u, cred))
	}
	// outcomes counts, per operation and resource type, the allowed and the
	// denied requests: every request below must have been seen both ways.
	outcomes := map[string][2]int{}
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			text := fmt.Sprintf(`upstream: {bootstrap_servers: [%q]}
listeners:
  bind_host: 127.0.0.1
  bootstrap_port: 0
  broker_port_base: 0
  sasl: {mode: terminate, mechanisms: [PLAIN], users: [%s]}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
audit: {output: %q}
%s`, cluster.ListenAddrs()[0], strings.Join(creds, ", "), filepath.Join(t.TempDir(), "audit.log"), agreementPolicy(rng, 24))
			path := testkit.WriteConfig(t, text)
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatalf("generated policy: %v\n%s", err, text)
			}
			checker, err := policy.NewChecker(cfg.Policy, "policy")
			if err != nil {
				t.Fatal(err)
			}
			kp := kproxytest.Start(t, text)

			conns := map[[2]string]*testkit.RawConn{}
			conn := func(q agreeQuestion) *testkit.RawConn {
				key := [2]string{q.user, q.clientID}
				if c, ok := conns[key]; ok {
					return c
				}
				c := testkit.DialRaw(t, kp.BootstrapAddr(), q.clientID)
				c.LoginPLAIN(t, q.user, q.user+"-secret")
				conns[key] = c
				return c
			}
			explain := func(q agreeQuestion, op acl.Operation, rt acl.ResourceType, name string) bool {
				p := policy.Principal{User: q.user, ClientID: q.clientID, Addr: clientAddr}
				x := checker.Explain(policy.Question{Principal: p, Operation: op, Resource: rt, Name: name})
				return x.Decision == policy.DecisionAllowText
			}

			var types []acl.ResourceType
			for rt := range agreeOps {
				types = append(types, rt)
			}
			slices.Sort(types)
			asked, allowed := 0, 0
			for range 200 {
				rt := types[rng.IntN(len(types))]
				q := agreeQuestion{user: agreeUsers[rng.IntN(len(agreeUsers))], clientID: agreeClientIDs[rng.IntN(len(agreeClientIDs))],
					op: agreeOps[rt][rng.IntN(len(agreeOps[rt]))], rt: rt}
				q.name = agreeNames[rt][rng.IntN(len(agreeNames[rt]))]
				want := explain(q, q.op, q.rt, q.name)
				if q.op == acl.Create { // CreateTopics: Create on the cluster or the topic, and Describe on the topic
					want = (explain(q, acl.Create, acl.Cluster, acl.ClusterName) || want) && explain(q, acl.Describe, acl.Topic, q.name)
				}
				req, code := agreeRequest(q)
				resp, err := conn(q).RoundTrip(req)
				if err != nil {
					t.Fatalf("%s: %T: %v", q, req, err)
				}
				got := code(resp) != int16(q.rt.DeniedCode())
				asked++
				kind := q.op.ConfigName() + " " + q.rt.ConfigKey()
				seen := outcomes[kind]
				if got {
					allowed++
					seen[0]++
				} else {
					seen[1]++
				}
				outcomes[kind] = seen
				if got != want {
					x := checker.Explain(policy.Question{Principal: policy.Principal{User: q.user, ClientID: q.clientID, Addr: clientAddr},
						Operation: q.op, Resource: q.rt, Name: q.name})
					var why strings.Builder
					x.WriteText(&why)
					t.Errorf("%s: kproxy allowed %v (%T), explain says %v:\n%s", q, got, req, want, why.String())
				}
			}
			if allowed == 0 || allowed == asked {
				t.Errorf("%d of %d questions allowed: the generated policy decides nothing either way", allowed, asked)
			}
			t.Logf("%d questions, %d allowed", asked, allowed)
		})
	}
	for kind, seen := range outcomes {
		if seen[0] == 0 || seen[1] == 0 {
			t.Errorf("%s: %d allowed, %d denied; want both, so that either answer is compared", kind, seen[0], seen[1])
		}
	}
	if len(outcomes) < 17 {
		t.Errorf("%d kinds of request asked, want all 17: %v", len(outcomes), outcomes)
	}
}

// agreeRequest is the request that asks q's question alone (with its
// partners, for create) and how to read the error code that answers it.
func agreeRequest(q agreeQuestion) (kmsg.Request, func(kmsg.Response) int16) {
	name := q.name
	switch q.rt {
	case acl.Topic:
		return topicRequest(q.op, name)
	case acl.Group:
		switch q.op {
		case acl.Read:
			r := kmsg.NewPtrHeartbeatRequest()
			r.Group, r.MemberID, r.Generation = name, "m-1", 1
			return r, func(resp kmsg.Response) int16 { return resp.(*kmsg.HeartbeatResponse).ErrorCode }
		case acl.Describe:
			r := kmsg.NewPtrDescribeGroupsRequest()
			r.Groups = []string{name}
			return r, func(resp kmsg.Response) int16 { return resp.(*kmsg.DescribeGroupsResponse).Groups[0].ErrorCode }
		case acl.Delete:
			r := kmsg.NewPtrDeleteGroupsRequest()
			r.Groups = []string{name}
			return r, func(resp kmsg.Response) int16 { return resp.(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode }
		}
	case acl.TransactionalID:
		switch q.op {
		case acl.Write:
			r := kmsg.NewPtrInitProducerIDRequest()
			r.TransactionalID, r.TransactionTimeoutMillis = &name, 60000
			return r, func(resp kmsg.Response) int16 { return resp.(*kmsg.InitProducerIDResponse).ErrorCode }
		case acl.Describe:
			r := kmsg.NewPtrDescribeTransactionsRequest()
			r.TransactionalIDs = []string{name}
			return r, func(resp kmsg.Response) int16 {
				return resp.(*kmsg.DescribeTransactionsResponse).TransactionStates[0].ErrorCode
			}
		}
	case acl.Cluster:
		switch q.op {
		case acl.Describe:
			r := kmsg.NewPtrDescribeACLsRequest()
			r.ResourceType, r.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
			r.Operation, r.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
			return r, func(resp kmsg.Response) int16 { return resp.(*kmsg.DescribeACLsResponse).ErrorCode }
		case acl.Alter:
			r := kmsg.NewPtrElectLeadersRequest()
			r.SetVersion(2)
			t := kmsg.NewElectLeadersRequestTopic()
			t.Topic, t.Partitions = "no-such-topic", []int32{0}
			r.Topics = []kmsg.ElectLeadersRequestTopic{t}
			return r, func(resp kmsg.Response) int16 { return resp.(*kmsg.ElectLeadersResponse).ErrorCode }
		case acl.DescribeConfigs:
			r := kmsg.NewPtrDescribeConfigsRequest()
			res := kmsg.NewDescribeConfigsRequestResource()
			res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, "0"
			r.Resources = []kmsg.DescribeConfigsRequestResource{res}
			return r, func(resp kmsg.Response) int16 { return resp.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode }
		case acl.AlterConfigs:
			return incrementalAlter(kmsg.ConfigResourceTypeBroker, "0")
		}
	}
	panic(fmt.Sprintf("no request for %s", q))
}

// topicRequest is the request that asks op on topic alone.
func topicRequest(op acl.Operation, topic string) (kmsg.Request, func(kmsg.Response) int16) {
	switch op {
	case acl.Read:
		r := testkit.FetchByName(12, topic)
		r.MaxWaitMillis = 0
		return r, func(resp kmsg.Response) int16 {
			return resp.(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode
		}
	case acl.Write:
		r := testkit.ProduceByName(9, 1, testkit.RecordBatch("v"), topic)
		r.TimeoutMillis = 5000
		return r, func(resp kmsg.Response) int16 {
			return resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
		}
	case acl.Create:
		r := kmsg.NewPtrCreateTopicsRequest()
		r.ValidateOnly = true
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = topic, 1, 1
		r.Topics = []kmsg.CreateTopicsRequestTopic{t}
		return r, func(resp kmsg.Response) int16 { return resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode }
	case acl.Delete:
		r := kmsg.NewPtrDeleteRecordsRequest()
		t := kmsg.NewDeleteRecordsRequestTopic()
		p := kmsg.NewDeleteRecordsRequestTopicPartition()
		t.Topic, t.Partitions = topic, []kmsg.DeleteRecordsRequestTopicPartition{p}
		r.Topics, r.TimeoutMillis = []kmsg.DeleteRecordsRequestTopic{t}, 5000
		return r, func(resp kmsg.Response) int16 {
			return resp.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0].ErrorCode
		}
	case acl.Alter:
		r := kmsg.NewPtrCreatePartitionsRequest()
		r.ValidateOnly, r.TimeoutMillis = true, 5000
		t := kmsg.NewCreatePartitionsRequestTopic()
		t.Topic, t.Count = topic, 10
		r.Topics = []kmsg.CreatePartitionsRequestTopic{t}
		return r, func(resp kmsg.Response) int16 { return resp.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode }
	case acl.Describe:
		r := kmsg.NewPtrListOffsetsRequest()
		r.ReplicaID = -1
		t := kmsg.NewListOffsetsRequestTopic()
		p := kmsg.NewListOffsetsRequestTopicPartition()
		p.Timestamp = -1
		t.Topic, t.Partitions = topic, []kmsg.ListOffsetsRequestTopicPartition{p}
		r.Topics = []kmsg.ListOffsetsRequestTopic{t}
		return r, func(resp kmsg.Response) int16 {
			return resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode
		}
	case acl.DescribeConfigs:
		r := kmsg.NewPtrDescribeConfigsRequest()
		res := kmsg.NewDescribeConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, topic
		r.Resources = []kmsg.DescribeConfigsRequestResource{res}
		return r, func(resp kmsg.Response) int16 { return resp.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode }
	case acl.AlterConfigs:
		return incrementalAlter(kmsg.ConfigResourceTypeTopic, topic)
	}
	panic(fmt.Sprintf("no request for %s on topic %s", op.ConfigName(), topic))
}

func incrementalAlter(rt kmsg.ConfigResourceType, name string) (kmsg.Request, func(kmsg.Response) int16) {
	r := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r.ValidateOnly = true
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = rt, name
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	value := "1000"
	c.Name, c.Value = "retention.ms", &value
	if rt == kmsg.ConfigResourceTypeBroker {
		c.Name = "log.retention.ms"
	}
	res.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{c}
	r.Resources = []kmsg.IncrementalAlterConfigsRequestResource{res}
	return r, func(resp kmsg.Response) int16 {
		return resp.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode
	}
}
