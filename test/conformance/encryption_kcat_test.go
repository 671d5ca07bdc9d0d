package conformance

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
)

// kcat's producer and consumer for the encryption scenario: librdkafka
// (Debian's build) with each codec, headers given with -H.

func init() {
	register("kcat", scenarioEncryption, func(t *testing.T, c *cellCtx, e *env) {
		requireKcat(t, c)
		encScenario(t, c, e, encClient{produce: e.kcatEncProduce, consume: e.kcatEncConsume, idempotent: true,
			tombstone: e.kcatEncTombstone, readNullable: e.kcatEncReadNullable, txn: e.kcatEncTxn, readCommitted: e.kcatEncReadCommitted,
			txnNote: "kcat commits the first and third (-X transactional.id: stdin is one transaction, committed at EOF; kcat cannot abort one), franz-go aborts the second"})
	})
}

// kcatEncProduce produces rs in one kcat run; -H sets every record's
// headers, so rs must share theirs (encRecs makes them so).
func (e *env) kcatEncProduce(t *testing.T, addr, topic, codec string, rs []encRec) {
	t.Helper()
	args := append([]string{"-b", addr, "-t", topic, "-z", codec}, kcatProduce...)
	for _, h := range rs[0].headers {
		args = append(args, "-H", h.key+"="+h.value)
	}
	var in bytes.Buffer
	for _, r := range rs {
		if !slices.Equal(r.headers, rs[0].headers) {
			t.Fatalf("kcat gives every record of a run the same headers; %+v differs", r)
		}
		in.WriteString(r.key + ":" + r.value + "\n")
	}
	e.kcat(t, e.enc, in.Bytes(), args...)
}

// kcatEncConsume reads topic from the beginning: key, value and headers
// (k=v,k=v) tab-separated.
func (e *env) kcatEncConsume(t *testing.T, addr, topic string, n int) []encRec {
	t.Helper()
	out := e.kcat(t, e.enc, nil, "-b", addr, "-C", "-t", topic, "-o", "beginning", "-e", "-c", itoa(int64(n)), "-f", `%k\t%s\t%h\n`)
	var got []encRec
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("kcat printed %q, want key, value and headers", line)
		}
		g := encRec{key: f[0], value: f[1]}
		for _, kv := range strings.Split(f[2], ",") {
			k, v, _ := strings.Cut(kv, "=")
			g.headers = append(g.headers, encHeader{k, v})
		}
		got = append(got, g)
	}
	return got
}

// kcatEncTombstone produces key=value and key's tombstone in one kcat run:
// -Z sends the empty value of the second line as a null.
func (e *env) kcatEncTombstone(t *testing.T, addr, topic, key, value string) {
	t.Helper()
	e.kcat(t, e.enc, []byte(key+":"+value+"\n"+key+":\n"), append([]string{"-b", addr, "-t", topic, "-Z"}, kcatProduce...)...)
}

// kcatEncTxn: kcat commits a transaction, franz-go aborts one, kcat
// commits another (kcat ends every transaction with a commit), lz4.
func (e *env) kcatEncTxn(t *testing.T, c *cellCtx, addr, topic string) txnBatches {
	t.Helper()
	txn := []string{"-b", addr, "-t", topic, "-P", "-K:", "-z", "lz4", "-X", "transactional.id=" + name(c, "txn"), "-m", "30"}
	first := makeRecsFrom("commit", 0, encTxnRecords)
	e.kcat(t, e.enc, kcatInput(first), txn...)
	aborted := makeRecsFrom("abort", encTxnRecords, encTxnRecords)
	fr := testkit.Client(t, kgo.SeedBrokers(addr), kgo.TransactionalID(name(c, "franz-txn")))
	if err := fr.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	franzProduceNoWait(t, fr, topic, aborted)
	endTxn(t, fr, false)
	second := makeRecsFrom("commit", 2*encTxnRecords, encTxnRecords)
	e.kcat(t, e.enc, kcatInput(second), txn...)
	return txnBatches{committed: append(first, second...), aborted: aborted}
}

// kcatEncReadCommitted reads topic from the beginning with
// isolation.level=read_committed.
func (e *env) kcatEncReadCommitted(t *testing.T, addr, topic string, n int) []got {
	t.Helper()
	return parseKcat(t, e.kcat(t, e.enc, nil, "-b", addr, "-C", "-t", topic, "-o", "beginning", "-e", "-c", itoa(int64(n)),
		"-X", "isolation.level=read_committed", "-f", kcatFormat))
}

// kcatEncReadNullable reads the first n records of topic; -Z prints a
// null value as NULL.
func (e *env) kcatEncReadNullable(t *testing.T, addr, topic string, n int) []encNullable {
	t.Helper()
	out := e.kcat(t, e.enc, nil, "-b", addr, "-C", "-t", topic, "-o", "beginning", "-e", "-c", itoa(int64(n)), "-Z", "-f", `%k\t%s\n`)
	var rs []encNullable
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		k, v, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("kcat printed %q, want key and value", line)
		}
		rs = append(rs, encNullable{key: k, value: v, null: v == "NULL"})
		if v == "NULL" {
			rs[len(rs)-1].value = ""
		}
	}
	return rs
}
