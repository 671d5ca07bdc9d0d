package conformance

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// kcat's producer and consumer for the encryption scenario: librdkafka
// (Debian's build) with each codec, headers given with -H.

func init() {
	register("kcat", scenarioEncryption, func(t *testing.T, c *cellCtx, e *env) {
		requireKcat(t, c)
		encRoundTrip(t, c, e, e.kcatEncProduce, e.kcatEncConsume)
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
