package lowpriv

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// The principal's world. It may read topic lowprivMine and use group
// lowprivMyGroup; everything else below is seeded upstream, directly, and
// must stay out of its reach.
const (
	lowprivUser     = "mallory"
	lowprivPassword = "mallory-secret"
	lowprivMine     = "mine"
	lowprivMyGroup  = "mygroup"

	// Named in the attacker's requests: their names may be echoed back
	// (as Kafka echoes them with the denial), nothing else about them.
	secretTopic = "secret-orders"
	secretGroup = "secret-group"
	secretTxn   = "secret-txn"

	// Never named by the attacker: must never appear in any answer.
	payrollTopic = "zz-payroll"
	payrollGroup = "zz-payroll-group"

	// Values seeded upstream that must never reach the attacker.
	secretRecordValue = "SECRET-VALUE"
	secretOffsetMeta  = "SECRET-META"
	secretConfigValue = "271828182"
)

// lowprivPolicy lets mallory read (so describe) one topic and use one
// group; default deny.
const lowprivPolicy = `
policy:
  default: deny
  rules:
    - {name: mallory-reads-mine, principals: ["User:mallory"], allow: [read], topics: ["mine"]}
    - {name: mallory-own-group, principals: ["User:mallory"], allow: [read], groups: ["mygroup"]}
`

// lowprivEnv is kproxy (the real binary) in front of a seeded 3-node
// kfake, and what the test learnt when seeding.
type lowprivEnv struct {
	t       *testing.T
	cluster *kfake.Cluster
	kp      *testkit.Binary
	log     *lowprivLog
	seen    *upstreamSeen
	// topicIDs are the seeded topics' ids, by name.
	topicIDs map[string][16]byte
	// memberID is the id of the member lingering in secretGroup.
	memberID string
}

// startLowprivEnv seeds the cluster, then starts kproxy in front of it.
func startLowprivEnv(t *testing.T) *lowprivEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the kproxy binary")
	}
	c := testkit.Cluster(t, 3, kfake.SeedTopics(3, lowprivMine, secretTopic, payrollTopic))
	e := &lowprivEnv{t: t, cluster: c, seen: &upstreamSeen{byKey: map[int16]int{}}}
	e.seed()
	// Observe what reaches the cluster from now on: the seeding clients
	// are closed, so every request is kproxy's.
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		e.seen.note(req)
		return nil, nil, false
	})

	cred, err := auth.HashPassword(auth.ScramSHA512, lowprivPassword, auth.MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`
upstream: {bootstrap_servers: ["%s"]}
listeners:
  bind_host: 127.0.0.1
  bootstrap_port: 0
  broker_port_base: 0
  sasl: {mode: terminate, mechanisms: [PLAIN, SCRAM-SHA-512], users: [{name: %s, credentials: [%q]}]}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json, sample: 1ns}
audit: {output: %q}
%s`, strings.Join(c.ListenAddrs(), `", "`), lowprivUser, cred, filepath.Join(t.TempDir(), "audit.log"), lowprivPolicy)
	// log.sample 1ns: every connection kproxy closes is logged, none held
	// back as a repeat, so each probe's close can be waited for.
	e.kp = advkit.Start(t, cfg)
	e.log = drainLowprivLog(e.kp)
	return e
}

// seed writes, directly to the cluster, what the principal must not
// learn: records, topic configs, committed offsets with metadata (in a
// group it may not use, and for a hidden topic in the group it may), a
// transaction, and a member lingering in a group it may not describe.
func (e *lowprivEnv) seed() {
	t := e.t
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, topic := range []string{lowprivMine, secretTopic, payrollTopic} {
		value := secretRecordValue + "-" + topic
		if topic == lowprivMine {
			value = "mine-value"
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(value)}).FirstErr(); err != nil {
			t.Fatalf("seed %s: %v", topic, err)
		}
	}
	alter := []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr(secretConfigValue)}}
	if _, err := adm.AlterTopicConfigs(ctx, alter, secretTopic, payrollTopic); err != nil {
		t.Fatalf("seed configs: %v", err)
	}
	commit := func(group string, offsets map[string]string) {
		var committed kadm.Offsets
		for topic, meta := range offsets {
			committed.Add(kadm.Offset{Topic: topic, Partition: 0, At: 1, LeaderEpoch: -1, Metadata: meta})
		}
		if err := adm.CommitAllOffsets(ctx, group, committed); err != nil {
			t.Fatalf("seed offsets of %s: %v", group, err)
		}
	}
	commit(secretGroup, map[string]string{secretTopic: secretOffsetMeta + "-secret-group"})
	commit(payrollGroup, map[string]string{payrollTopic: secretOffsetMeta + "-payroll-group"})
	commit(lowprivMyGroup, map[string]string{lowprivMine: "mine-meta", payrollTopic: secretOffsetMeta + "-in-mygroup"})

	md, err := adm.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.topicIDs = map[string][16]byte{}
	for _, td := range md.Topics {
		e.topicIDs[td.Topic] = td.ID
	}
	e.seedTransaction(ctx)
	e.memberID = lingeringMember(t, ctx, cl, secretGroup)
}

// seedTransaction commits one transaction of secretTxn writing to the
// payroll topic.
func (e *lowprivEnv) seedTransaction(ctx context.Context) {
	t := e.t
	tx, err := kgo.NewClient(kgo.SeedBrokers(e.cluster.ListenAddrs()...), kgo.TransactionalID(secretTxn))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx.ProduceSync(ctx, &kgo.Record{Topic: payrollTopic, Value: []byte(secretRecordValue + "-txn")}).FirstErr(); err != nil {
		t.Fatalf("seed transaction: %v", err)
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("seed transaction: %v", err)
	}
}

// lingeringMember joins group as a classic consumer subscribed to the
// payroll topic, with a session long enough to outlive the test, and
// returns its member id. Nothing heartbeats for it afterwards, so the
// cluster sees no request but kproxy's.
func lingeringMember(t *testing.T, ctx context.Context, cl *kgo.Client, group string) string {
	t.Helper()
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = []string{payrollTopic}
	meta.UserData = []byte(secretOffsetMeta + "-userdata")
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group = group
	join.SessionTimeoutMillis = 300_000
	join.RebalanceTimeoutMillis = 300_000
	join.ProtocolType = "consumer"
	proto := kmsg.NewJoinGroupRequestProtocol()
	proto.Name = "range"
	proto.Metadata = meta.AppendTo(nil)
	join.Protocols = append(join.Protocols, proto)
	var resp *kmsg.JoinGroupResponse
	for range 3 { // the first join of v4+ is answered MEMBER_ID_REQUIRED
		r, err := join.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("seed member: %v", err)
		}
		resp = r
		if r.ErrorCode == 0 {
			break
		}
		join.MemberID = r.MemberID
	}
	if resp.ErrorCode != 0 {
		t.Fatalf("seed member: JoinGroup error %d", resp.ErrorCode)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.Generation, sync.MemberID = group, resp.Generation, resp.MemberID
	sync.ProtocolType, sync.Protocol = kmsg.StringPtr("consumer"), resp.Protocol
	assignment := kmsg.NewSyncGroupRequestGroupAssignment()
	assignment.MemberID = resp.MemberID
	plan := kmsg.NewConsumerMemberAssignment()
	plan.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: payrollTopic, Partitions: []int32{0, 1, 2}}}
	assignment.MemberAssignment = plan.AppendTo(nil)
	sync.GroupAssignment = append(sync.GroupAssignment, assignment)
	if r, err := sync.RequestWith(ctx, cl); err != nil || r.ErrorCode != 0 {
		t.Fatalf("seed member: SyncGroup: %v %+v", err, r)
	}
	return resp.MemberID
}

// forbidden are the byte strings no answer to the principal may hold:
// the names it never sent and the values it may not read. named adds the
// names it sent, for the answers (listings) that must not echo them.
func (e *lowprivEnv) forbidden(named bool) map[string][]byte {
	f := map[string][]byte{
		"payroll topic and group names": []byte("zz-payroll"),
		"a record value":                []byte(secretRecordValue),
		"committed offset metadata":     []byte(secretOffsetMeta),
		"a topic config value":          []byte(secretConfigValue),
		"the lingering member's id":     []byte(e.memberID),
	}
	id := e.topicIDs[payrollTopic]
	f["the payroll topic's id"] = id[:]
	if named {
		f["the secret topic's name"] = []byte(secretTopic)
		f["the secret group's name"] = []byte(secretGroup)
		f["the secret transactional id"] = []byte(secretTxn)
		sid := e.topicIDs[secretTopic]
		f["the secret topic's id"] = sid[:]
	}
	return f
}

// leaks names each forbidden byte string found in b.
func (e *lowprivEnv) leaks(b []byte, named bool) []string {
	var found []string
	for what, s := range e.forbidden(named) {
		if len(s) > 0 && strings.Contains(string(b), string(s)) {
			found = append(found, what)
		}
	}
	return found
}

// dial opens a raw connection to kproxy's bootstrap listener and logs in
// as the principal with SASL PLAIN.
func (e *lowprivEnv) dial() *testkit.RawConn {
	e.t.Helper()
	return e.dialTo(e.kp.Bootstrap)
}

// dialTo is dial to another of kproxy's listeners (a broker's port).
func (e *lowprivEnv) dialTo(addr string) *testkit.RawConn {
	e.t.Helper()
	c := testkit.DialRaw(e.t, addr, "lowpriv-attacker")
	c.LoginPLAIN(e.t, lowprivUser, lowprivPassword)
	return c
}

// upstreamSeen counts, per API key, the requests that reached the
// cluster, and keeps their bytes.
type upstreamSeen struct {
	mu    sync.Mutex
	byKey map[int16]int
	bytes [][]byte
}

func (s *upstreamSeen) note(req kmsg.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byKey[req.Key()]++
	s.bytes = append(s.bytes, req.AppendTo(nil))
}

// count is how many requests of key reached the cluster so far.
func (s *upstreamSeen) count(key int16) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byKey[key]
}

// since returns the bytes of the requests from the n-th on, and the
// number seen so far.
func (s *upstreamSeen) since(n int) ([][]byte, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bytes[n:]...), len(s.bytes)
}

// lowprivLog keeps every line kproxy logs, read by one goroutine so that
// the log pipe never fills however many connections a test makes.
type lowprivLog struct {
	mu    sync.Mutex
	lines []testkit.LogLine
}

func drainLowprivLog(kp *testkit.Binary) *lowprivLog {
	l := &lowprivLog{}
	go func() {
		for {
			line, ok := kp.Next(time.Hour)
			if !ok {
				return
			}
			l.mu.Lock()
			l.lines = append(l.lines, line)
			l.mu.Unlock()
		}
	}()
	return l
}

// mark is the number of lines logged so far, for wait to look after.
func (l *lowprivLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// wait returns the first line from the from-th on that match accepts,
// waiting up to 20 s.
func (l *lowprivLog) wait(t *testing.T, from int, what string, match func(testkit.LogLine) bool) testkit.LogLine {
	t.Helper()
	var found testkit.LogLine
	if !testkit.WaitFor(20*time.Second, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, line := range l.lines[from:] {
			if match(line) {
				found = line
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no kproxy log line for %s within 20 s", what)
	}
	return found
}
