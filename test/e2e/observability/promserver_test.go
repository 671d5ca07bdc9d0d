package observability

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit"
)

// promServer is a real Prometheus (Debian's prometheus package) started by
// the test on loopback, scraping one kproxy admin endpoint every second
// and evaluating a rules file every second.
type promServer struct {
	t    testing.TB
	base string // http://127.0.0.1:port
}

// needTool returns the path of a tool from the prometheus package, or
// skips the test saying how to install it.
func needTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed (apt-get install prometheus; .ci/run installs it): %v", name, err)
	}
	return path
}

// startPrometheus starts Prometheus with its data in a temporary
// directory, scraping target (host:port, job "kproxy") and loading
// rulesFile, and returns once it answers /-/ready.
func startPrometheus(t testing.TB, target, rulesFile string) *promServer {
	t.Helper()
	bin := needTool(t, "prometheus")
	dir := t.TempDir()
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: kproxy
    static_configs: [{targets: [%q]}]
`, rules, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// The port is chosen free and then handed to Prometheus, so another
	// process may take it in between: try again on a fresh one then.
	for attempt := 1; ; attempt++ {
		p, inUse := runPrometheus(t, bin, cfgPath, filepath.Join(dir, fmt.Sprint(attempt)))
		if !inUse {
			return p
		}
		if attempt == 3 {
			t.Fatal("prometheus found its port taken three times")
		}
	}
}

// runPrometheus starts Prometheus with its data and log in dir on a free
// loopback port and returns once it answers /-/ready, or says the port
// was taken before Prometheus bound it.
func runPrometheus(t testing.TB, bin, cfgPath, dir string) (p *promServer, portTaken bool) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(testkit.FreePort(t))) // Prometheus cannot report the port it bound to ":0"
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	logPath := filepath.Join(dir, "prometheus.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	exited := make(chan struct{})
	var exitErr error
	go func() { exitErr = cmd.Wait(); logFile.Close(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil && len(b) > 0 {
				t.Logf("prometheus log:\n%s", b)
			}
		}
	})
	p = &promServer{t: t, base: "http://" + addr}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			if strings.Contains(string(b), "address already in use") {
				return nil, true
			}
			t.Fatalf("prometheus exited: %v\n%s", exitErr, b)
		default:
		}
		if resp, err := http.Get(p.base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, false
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus at %s not ready within 20s", addr)
		}
	}
}

// apiResponse is the envelope of every Prometheus HTTP API answer.
type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

// get calls the Prometheus HTTP API at path with the query parameters and
// decodes its data into out.
func (p *promServer) get(ctx context.Context, path string, params url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path+"?"+params.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("%s answered %s: %s", path, resp.Status, body)
	}
	if r.Status != "success" {
		return fmt.Errorf("%s: %s: %s", path, r.ErrorType, r.Error)
	}
	return json.Unmarshal(r.Data, out)
}

// series is one element of an instant vector.
type series struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// query evaluates expr now and returns the series of its instant vector
// (a scalar counts as one series).
func (p *promServer) query(ctx context.Context, expr string) ([]series, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := p.get(ctx, "/api/v1/query", url.Values{"query": {expr}}, &data); err != nil {
		return nil, err
	}
	switch data.ResultType {
	case "vector":
		var v []series
		err := json.Unmarshal(data.Result, &v)
		return v, err
	case "scalar":
		return []series{{}}, nil
	default:
		return nil, fmt.Errorf("%q: result type %s, want an instant vector", expr, data.ResultType)
	}
}

// ruleHealth is what Prometheus says of one loaded rule.
type ruleHealth struct {
	Name      string `json:"name"`
	Health    string `json:"health"`
	LastError string `json:"lastError"`
}

// rules returns the rules Prometheus loaded, with their evaluation health.
func (p *promServer) rules(ctx context.Context) ([]ruleHealth, error) {
	var data struct {
		Groups []struct {
			Rules []ruleHealth `json:"rules"`
		} `json:"groups"`
	}
	if err := p.get(ctx, "/api/v1/rules", nil, &data); err != nil {
		return nil, err
	}
	var all []ruleHealth
	for _, g := range data.Groups {
		all = append(all, g.Rules...)
	}
	return all, nil
}
