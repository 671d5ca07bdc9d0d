package conformance

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The matrix's axes, in the order they are printed.
var (
	clients   = []string{"franz-go", "sarama", "kafka-go", "kcat", "confluent-kafka", "java"}
	scenarios = []string{"produce-consume", "resume", "protocol-versions", "kip848", "share-group", "admin", "transactions", "addresses", "tls-scram", "sni", "virtual-cluster", "oauth", "upstream-scram-tls", "upstream-oauth", "encryption", "large-messages", "rolling-restart", "quota-produce", "quota-fetch", "quota-principals"}
	upstreams = []string{"kfake", "kafka"}
)

// Cell statuses.
const (
	pass = "PASS"
	fail = "FAIL"
	skip = "SKIP"
	na   = "N/A"
	none = "—" // not part of the suite (see notNA)
)

// notApplicable says why a client cannot do a scenario at all, on any
// upstream. Those cells are never run.
var notApplicable = map[[2]string]string{
	{"sarama", "kip848"}:         "sarama implements only the classic group protocol (JoinGroup/SyncGroup)",
	{"kafka-go", "kip848"}:       "kafka-go implements only the classic group protocol",
	{"kafka-go", "transactions"}: "kafka-go has no transactional producer, and its read_committed Reader returns aborted records (segmentio/kafka-go#1332; reproduced against Kafka without kproxy)",
	{"kcat", "kip848"}:           "kcat is built on Debian's librdkafka 2.0.2; the KIP-848 consumer protocol came in librdkafka 2.4 (early access; GA in 2.12)",
	{"sarama", "share-group"}:    "sarama has no share-group (KIP-932) consumer",
	{"kafka-go", "share-group"}:  "kafka-go has no share-group (KIP-932) consumer",
	{"kcat", "share-group"}:      "librdkafka 2.0.2 (kcat) has no share-group (KIP-932) consumer",
	{"kcat", "admin"}:            "kcat has no admin commands (its metadata listing, -L, is the addresses scenario)",
	{"kcat", "oauth"}:            "kcat is built on Debian's librdkafka 2.0.2 without libcurl: sasl.oauthbearer.method=oidc is \"not supported in this build\", and its only other OAUTHBEARER tokens are unsecured (alg none), which kproxy refuses",
}

// notCovered lists cells the suite does not run although the client could:
// shown as "—" with the reason in the notes.
var notCovered = map[[2]string]string{
	{"franz-go", "protocol-versions"}:        negotiatesVersions,
	{"kafka-go", "protocol-versions"}:        negotiatesVersions,
	{"kcat", "protocol-versions"}:            negotiatesVersions,
	{"confluent-kafka", "protocol-versions"}: negotiatesVersions,
	{"java", "protocol-versions"}:            negotiatesVersions,
	{"sarama", "quota-produce"}:              quotaClientsCovered,
	{"sarama", "quota-fetch"}:                quotaClientsCovered,
	{"kafka-go", "quota-produce"}:            quotaClientsCovered,
	{"kafka-go", "quota-fetch"}:              quotaClientsCovered,
	{"kcat", "quota-produce"}:                quotaClientsCovered,
	{"kcat", "quota-fetch"}:                  quotaClientsCovered,
	{"sarama", "quota-principals"}:           quotaPrincipalsCovered,
	{"kafka-go", "quota-principals"}:         quotaPrincipalsCovered,
	{"kcat", "quota-principals"}:             quotaPrincipalsCovered,
	{"confluent-kafka", "quota-principals"}:  quotaPrincipalsCovered,
	{"java", "quota-principals"}:             quotaPrincipalsCovered,
	{"sarama", scenarioLargeMessages}:        largeMessagesCovered,
	{"kafka-go", scenarioLargeMessages}:      largeMessagesCovered,
	{"kcat", scenarioLargeMessages}:          largeMessagesCovered,
}

// Why only some clients run the quota scenarios (each is a 20 s
// measurement, on CPU the clients share).
const (
	quotaClientsCovered    = "the quota scenarios run franz-go, Kafka's perf tools (Java) and librdkafka through confluent-kafka (kcat is the same librdkafka)"
	quotaPrincipalsCovered = "two principals at once is a property of kproxy's quota rules, not of the client: franz-go runs it"
)

// largeMessagesCovered is why three clients do not run large-messages:
// offloading is kproxy's, invisible to a client but for its size limits,
// and a cell moves more than half a GiB through kproxy and the store.
const largeMessagesCovered = "the large-messages cells move 5, 50 and 500 MiB records; they run franz-go, librdkafka through confluent-kafka (kcat is the same librdkafka) and the Java client, whose size settings docs/large-messages.md lists"

// negotiatesVersions is why only sarama runs protocol-versions.
const negotiatesVersions = "the client uses the newest versions it and the broker support (ApiVersions), as every other cell exercises; sarama is configured for a Kafka version, so it is the client run at older ones"

// notOnUpstream says why a scenario cannot run on one upstream.
var notOnUpstream = map[[2]string]string{
	{"kfake", "rolling-restart"}:     "kfake's brokers live in the test process and cannot be restarted",
	{"kfake", scenarioUpstreamSCRAM}: upstreamSecurityNA,
	{"kfake", scenarioUpstreamOAuth}: upstreamSecurityNA,
	{"kfake", "quota-produce"}:       quotaOnKfake,
	{"kfake", "quota-fetch"}:         quotaOnKfake,
	{"kfake", "quota-principals"}:    quotaOnKfake,
}

const quotaOnKfake = "the quota cells measure real clients against the real cluster; kproxy's quotas in front of kfake are test/e2e/quotas"

// notOnUpstreamCell says why one client cannot do a scenario against one
// upstream (a limitation of that upstream, reproduced without kproxy).
var notOnUpstreamCell = map[cellKey]string{
	{"kfake", "java", "share-group"}: "kfake answers ShareFetch with null records for some partitions, which Kafka's share consumer rejects (\"non-nullable field records was serialized as null\"; kafka-console-share-consumer fails against kfake directly too)",
	{"kfake", "java", "admin"}:       "kfake answers CreateTopics with null configs and DescribeTopicPartitions with null eligible leader replicas, on which Kafka's admin client throws (kafka-topics --create/--describe fail against kfake directly too)",
}

type cellKey struct{ upstream, client, scenario string }

type cellResult struct {
	status string
	notes  []string
	dur    time.Duration
}

var matrix = struct {
	sync.Mutex
	cells map[cellKey]*cellResult
}{cells: map[cellKey]*cellResult{}}

func result(k cellKey) *cellResult {
	matrix.Lock()
	defer matrix.Unlock()
	r := matrix.cells[k]
	if r == nil {
		r = &cellResult{}
		matrix.cells[k] = r
	}
	return r
}

// cellCtx is what a running cell knows about itself.
type cellCtx struct {
	key cellKey
}

// note adds an observation to the cell's notes in the matrix.
func (c *cellCtx) note(format string, args ...any) {
	r := result(c.key)
	matrix.Lock()
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
	matrix.Unlock()
}

// skipReason says why a cell is not run (N/A, not covered, or not on this
// upstream), with the status to report; "" runs it.
func skipReason(upstream, client, scenario string) (status, reason string) {
	if r, ok := notApplicable[[2]string{client, scenario}]; ok {
		return na, r
	}
	if r, ok := notOnUpstream[[2]string{upstream, scenario}]; ok {
		return na, r
	}
	if r, ok := notOnUpstreamCell[cellKey{upstream, client, scenario}]; ok {
		return na, r
	}
	if r, ok := notCovered[[2]string{client, scenario}]; ok {
		return none, r
	}
	return "", ""
}

// runCell runs fn as the subtest client/scenario of t and records its
// outcome in the matrix: PASS, FAIL, or SKIP (t.Skip, e.g. no real
// cluster or no kcat). Cells that cannot run are recorded without running.
func runCell(t *testing.T, upstream, client, scenario string, parallel bool, fn func(t *testing.T, c *cellCtx)) {
	t.Helper()
	k := cellKey{upstream, client, scenario}
	if status, reason := skipReason(upstream, client, scenario); status != "" {
		r := result(k)
		r.status = status
		r.notes = append(r.notes, reason)
		return
	}
	t.Run(client+"/"+scenario, func(t *testing.T) {
		if parallel {
			t.Parallel()
		}
		start := time.Now()
		c := &cellCtx{key: k}
		t.Cleanup(func() {
			r := result(k)
			matrix.Lock()
			defer matrix.Unlock()
			r.dur = time.Since(start)
			switch {
			case t.Failed():
				r.status = fail
			case t.Skipped():
				r.status = skip
			default:
				r.status = pass
			}
		})
		fn(t, c)
	})
}

// skipNote records why a cell is skipped and skips it.
func skipCell(t *testing.T, c *cellCtx, reason string) {
	t.Helper()
	c.note("%s", reason)
	t.Skip(reason)
}

// fillNotRunnable records the cells never offered to runCell that cannot
// run (a -run filter or KPROXY_CONFORMANCE_UPSTREAMS left them out, or
// they cannot run on an upstream, such as kfake's rolling restart), each
// saying why. Called with matrix locked.
func fillNotRunnable() {
	for _, u := range upstreams {
		for _, cl := range clients {
			for _, sc := range scenarios {
				k := cellKey{u, cl, sc}
				if matrix.cells[k] != nil {
					continue
				}
				if status, reason := skipReason(u, cl, sc); status != "" {
					matrix.cells[k] = &cellResult{status: status, notes: []string{reason}}
				}
			}
		}
	}
}

// renderMatrix returns the matrix as a Markdown table with notes.
func renderMatrix() string {
	matrix.Lock()
	defer matrix.Unlock()
	fillNotRunnable()
	var b strings.Builder
	b.WriteString("| client | scenario |")
	for _, u := range upstreams {
		fmt.Fprintf(&b, " %s |", u)
	}
	b.WriteString(" notes |\n|---|---|")
	for range upstreams {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	counts := map[string]int{}
	for _, cl := range clients {
		for _, sc := range scenarios {
			fmt.Fprintf(&b, "| %s | %s |", cl, sc)
			var notes []string
			seen := map[string]bool{}
			for _, u := range upstreams {
				r := matrix.cells[cellKey{u, cl, sc}]
				status := "not run"
				if r != nil && r.status != "" {
					status = r.status
				}
				counts[status]++
				fmt.Fprintf(&b, " %s |", status)
				if r == nil {
					continue
				}
				for _, n := range r.notes {
					key := n
					if seen[key] {
						continue
					}
					seen[key] = true
					if len(upstreams) > 1 && !sameNoteEverywhere(cl, sc, n) {
						n = u + ": " + n
					}
					notes = append(notes, n)
				}
			}
			fmt.Fprintf(&b, " %s |\n", strings.ReplaceAll(strings.Join(notes, "; "), "|", "/"))
		}
	}
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString("\ncells:")
	for _, k := range keys {
		fmt.Fprintf(&b, " %s %d,", k, counts[k])
	}
	s := strings.TrimSuffix(b.String(), ",")
	return s + "\n"
}

// slowest lists the n slowest cells that ran.
func slowest(n int) string {
	matrix.Lock()
	defer matrix.Unlock()
	type kd struct {
		k cellKey
		d time.Duration
	}
	var all []kd
	for k, r := range matrix.cells {
		if r.dur > 0 {
			all = append(all, kd{k, r.dur})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].d > all[j].d })
	var b strings.Builder
	b.WriteString("slowest cells:")
	for i, x := range all {
		if i == n {
			break
		}
		fmt.Fprintf(&b, " %s/%s/%s %.0fs,", x.k.upstream, x.k.client, x.k.scenario, x.d.Seconds())
	}
	return strings.TrimSuffix(b.String(), ",") + "\n"
}

// sameNoteEverywhere: every upstream's cell carries note n (then it is
// printed once, without an upstream prefix). Called with matrix locked.
func sameNoteEverywhere(client, scenario, n string) bool {
	for _, u := range upstreams {
		r := matrix.cells[cellKey{u, client, scenario}]
		if r == nil {
			return false
		}
		found := false
		for _, m := range r.notes {
			if m == n {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func TestMain(m *testing.M) {
	start := time.Now()
	if _, err := selectedUpstreams(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	setKMSCredentials()
	code := m.Run()
	cells := os.Getenv(cellsEnv)
	save := cells != ""
	from := ""
	if cells != "" {
		taken, failed, err := takeCells(cells)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
			save = false // keep the file as the earlier run left it
		}
		if len(failed) > 0 {
			fmt.Fprintf(os.Stderr, "%s: cells of an earlier run failed: %s\n", cellsEnv, strings.Join(failed, ", "))
			code = 1
		}
		from = takenNote(cells, taken)
	}
	md := renderMatrix()
	header := fmt.Sprintf("kproxy conformance matrix (kfake: in-process kfake; kafka: %s; %s%s)\n\n", realDescription(), time.Since(start).Round(time.Second), from)
	fmt.Print("\n" + header + md + slowest(8))
	if save {
		if err := saveCells(cells); err != nil {
			fmt.Fprintf(os.Stderr, "write %s: %v\n", cells, err)
			code = 1
		}
	}
	if out := os.Getenv("KPROXY_MATRIX_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(header+md), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "write %s: %v\n", out, err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}
