package admin

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit"
)

// largePolicy has n rules, one per user: compiling it, as every
// explanation does, takes tens of milliseconds for a few thousand.
func largePolicy(n int) string {
	var b strings.Builder
	b.WriteString("policy:\n  rules:\n")
	for i := range n {
		fmt.Fprintf(&b, "    - {name: r%d, principals: [\"User:u%d\"], allow: [write], topics: [\"orders-%d-*\"]}\n", i, i, i)
	}
	return b.String()
}

// explainAnswer is the part of a /policy/explain answer the tests read.
type explainAnswer struct {
	Status     int
	RetryAfter string
	Decision   string `json:"decision"`
	Error      string `json:"error"`
}

// explain asks kproxy's /policy/explain with the raw query.
func explain(t *testing.T, kp *testkit.Binary, query string) explainAnswer {
	t.Helper()
	resp, err := http.Get("http://" + kp.Admin + "/policy/explain?" + query)
	if err != nil {
		t.Fatalf("GET /policy/explain: %v", err)
	}
	defer resp.Body.Close()
	return decodeExplain(t, resp)
}

func decodeExplain(t *testing.T, resp *http.Response) explainAnswer {
	t.Helper()
	a := explainAnswer{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatalf("/policy/explain answered %d with a body that is not JSON: %v", resp.StatusCode, err)
	}
	return a
}

const allowedQuestion = "principal=User:u5&operation=write&topic=orders-5-x"

// A peer asks /policy/explain questions far larger than any real one: a
// 512 KiB topic name, 20000 claim parameters. Each would be parsed and
// explained against the whole policy; kproxy answers 414 (URI Too Long)
// without parsing a query past 16 KiB. A request line or header past
// net/http's 1 MiB is refused before any handler, with 431. A question of
// a sane size is still answered.
func TestExplainQueryBounded(t *testing.T) {
	kp := startKproxy(t, largePolicy(10))
	for name, query := range map[string]string{
		"a 512 KiB topic name":   "principal=User:u5&operation=write&topic=" + strings.Repeat("a", 512<<10),
		"20000 claim parameters": "principal=User:u5&operation=write&topic=t" + strings.Repeat("&claim=a%3Db", 20000),
	} {
		if a := explain(t, kp, query); a.Status != http.StatusRequestURITooLong || !strings.Contains(a.Error, "exceeds 16384") {
			t.Errorf("%s: %d %q, want 414 saying the bound", name, a.Status, a.Error)
		}
	}
	for name, header := range map[string]string{"a 2 MiB query": "", "a 2 MiB header": strings.Repeat("p", 2<<20)} {
		query := allowedQuestion
		if header == "" {
			query += "&topic=" + strings.Repeat("a", 2<<20)
		}
		req, _ := http.NewRequest(http.MethodGet, "http://"+kp.Admin+"/policy/explain?"+query, nil)
		req.Header.Set("X-Padding", header)
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("%s: %v %v, want 431", name, err, resp)
		} else {
			resp.Body.Close()
		}
	}
	if a := explain(t, kp, allowedQuestion+"&claim="+url.QueryEscape("team="+strings.Repeat("x", 8<<10))); a.Status != http.StatusOK || a.Decision != "ALLOW" {
		t.Errorf("an 8 KiB question: %+v, want 200 ALLOW", a)
	}
	stillServes(t, kp)
}

// 40 peers ask /policy/explain at the same instant under a policy of 3000
// rules (each explanation compiles it: tens of milliseconds of a core).
// kproxy computes at most 2 at once and answers the others 429 (Too Many
// Requests) with Retry-After at once, so a flood takes at most 2 cores
// from the data path; the probes and Kafka clients are served throughout,
// and the question is answered once the flood is over.
func TestExplainFloodBounded(t *testing.T) {
	kp := startKproxy(t, largePolicy(3000))
	const flood = 40
	// Each peer sends its request but its last byte; then all last bytes
	// go at once, so that every request reaches kproxy within a
	// millisecond, well inside one explanation.
	request := "GET /policy/explain?" + allowedQuestion + " HTTP/1.1\r\nHost: admin\r\nConnection: close\r\n\r"
	conns := make([]net.Conn, flood)
	for i := range conns {
		conns[i] = dialAdmin(t, kp)
		io.WriteString(conns[i], request)
	}
	for _, c := range conns {
		io.WriteString(c, "\n")
	}
	answers := make(chan explainAnswer, flood)
	for _, c := range conns {
		go func() {
			c.SetReadDeadline(time.Now().Add(60 * time.Second)) // 40 explanations on a loaded machine, at worst
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				answers <- explainAnswer{Error: err.Error()}
				return
			}
			defer resp.Body.Close()
			a := explainAnswer{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
			json.NewDecoder(resp.Body).Decode(&a)
			answers <- a
		}()
	}
	stillServes(t, kp)
	counts := map[int]int{}
	for range flood {
		a := <-answers
		counts[a.Status]++
		switch {
		case a.Status == http.StatusOK && a.Decision == "ALLOW":
		case a.Status == http.StatusTooManyRequests && a.RetryAfter != "" && a.Error != "":
		default:
			t.Errorf("an answer in the flood: %+v, want 200 ALLOW or 429 with Retry-After", a)
		}
	}
	if counts[http.StatusTooManyRequests] == 0 || counts[http.StatusOK] == 0 {
		t.Errorf("answers by status %v: want some 200 and the rest 429 (at most 2 computed at once)", counts)
	}
	if a := explain(t, kp, allowedQuestion); a.Status != http.StatusOK || a.Decision != "ALLOW" {
		t.Errorf("after the flood: %+v, want 200 ALLOW", a)
	}
	stillServes(t, kp)
}
