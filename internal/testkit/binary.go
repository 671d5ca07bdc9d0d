package testkit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BuildKproxy builds cmd/kproxy into a temporary directory and returns the
// binary's path. It builds in kproxy's own module, whichever module the
// test belongs to: a nested one (deploy/helm/test) replaces the root with
// its source, but its go.sum lists only what its own packages import.
func BuildKproxy(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kproxy")
	if out, err := GoBuild(bin); err != nil {
		t.Fatalf("go build kproxy: %v\n%s", err, out)
	}
	return bin
}

// GoBuild builds cmd/kproxy to bin, returning go build's output on error.
func GoBuild(bin string) (string, error) {
	root, err := sourceRoot()
	if err != nil {
		return "", err
	}
	build := exec.Command("go", "build", "-o", bin, "./cmd/kproxy")
	build.Dir = root
	out, err := build.CombinedOutput()
	return string(out), err
}

// moduleRoot is the directory of kproxy's root module: two up from this
// file's (internal/testkit).
func moduleRoot(t testing.TB) string {
	root, err := sourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func sourceRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", fmt.Errorf("testkit: cannot tell where kproxy's source is (built with -trimpath?): %q", file)
	}
	return filepath.Join(filepath.Dir(file), "..", ".."), nil
}

// LogLine is one line of kproxy's JSON log.
type LogLine map[string]any

// Message is the line's "message" field.
func (l LogLine) Message() string { s, _ := l["message"].(string); return s }

// Binary is a kproxy process started by RunBinary (or a kproxy running in
// the test's process, from ServeInProcess), with its JSON log
// (log.format: json) read line by line.
type Binary struct {
	t    testing.TB
	Cmd  *exec.Cmd // nil in process
	logs chan LogLine
	// Bootstrap and Admin are the addresses the log says the bootstrap
	// listener and the admin endpoint are bound to (Bootstrap: the first
	// virtual cluster's, with virtual_clusters; see VirtualClusterBootstrap).
	Bootstrap, Admin string
	// bootstraps are the bootstrap addresses logged so far, by virtual
	// cluster ("" for none).
	bootstraps map[string]string
	// terminate asks kproxy to drain and stop; wait returns its exit error.
	terminate func()
	wait      func() error
}

// RunBinary starts bin with --config cfgPath, waits until its log names
// the bootstrap listener's and the admin endpoint's addresses, and kills
// the process when the test ends (unless Stop ended it first).
func RunBinary(t testing.TB, bin, cfgPath string) *Binary {
	t.Helper()
	cmd := exec.Command(bin, "--config", cfgPath)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start kproxy: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return readLog(t, stdout, &Binary{Cmd: cmd,
		terminate: func() { cmd.Process.Signal(syscall.SIGTERM) }, wait: cmd.Wait})
}

// readLog reads b's JSON log from r until r ends, and returns b once the
// log has named the bootstrap listener's and the admin endpoint's
// addresses.
func readLog(t testing.TB, r io.Reader, b *Binary) *Binary {
	t.Helper()
	b.t, b.logs = t, make(chan LogLine, 1000)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var l LogLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				b.logs <- l
			}
		}
		close(b.logs)
	}()
	for b.Bootstrap == "" || b.Admin == "" {
		l := b.WaitLog("listener addresses", func(l LogLine) bool {
			return l["listener"] == "bootstrap" || strings.HasPrefix(l.Message(), "admin endpoint")
		})
		if l["listener"] == "bootstrap" {
			b.Bootstrap = b.noteBootstrap(l)
		} else {
			b.Admin, _ = l["addr"].(string)
		}
	}
	return b
}

// noteBootstrap records the bootstrap listener l logs and returns its address.
func (b *Binary) noteBootstrap(l LogLine) string {
	addr, _ := l["addr"].(string)
	vc, _ := l["virtual_cluster"].(string)
	if b.bootstraps == nil {
		b.bootstraps = map[string]string{}
	}
	b.bootstraps[vc] = addr
	return addr
}

// VirtualClusterBootstrap is the bootstrap address of virtual cluster
// name, waiting for the log line that names it if it has not been read.
func (b *Binary) VirtualClusterBootstrap(name string) string {
	b.t.Helper()
	for b.bootstraps[name] == "" {
		b.noteBootstrap(b.WaitLog("virtual cluster "+name+"'s bootstrap listener", func(l LogLine) bool {
			return l["listener"] == "bootstrap" && l.Message() == "listening"
		}))
	}
	return b.bootstraps[name]
}

// WaitLog returns the first log line from now on that match accepts,
// failing the test after 20 seconds or if kproxy exits first.
func (b *Binary) WaitLog(what string, match func(LogLine) bool) LogLine {
	b.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-b.logs:
			if !ok {
				b.t.Fatalf("kproxy exited while the test waited for %s", what)
			}
			if match(l) {
				return l
			}
		case <-deadline:
			b.t.Fatalf("no kproxy log line for %s within 20s", what)
		}
	}
}

// Next returns the next log line, or false if none came within d or
// kproxy exited. It reads the same lines as WaitLog.
func (b *Binary) Next(d time.Duration) (LogLine, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case l, ok := <-b.logs:
		return l, ok
	case <-t.C:
		return nil, false
	}
}

// MessagePrefix matches log lines whose message starts with prefix.
func MessagePrefix(prefix string) func(LogLine) bool {
	return func(l LogLine) bool { return strings.HasPrefix(l.Message(), prefix) }
}

// Stop sends SIGTERM (in process: ends the context) and waits up to 40
// seconds for kproxy to exit. It returns the log lines written after the
// signal and the exit error.
func (b *Binary) Stop() ([]LogLine, error) {
	b.t.Helper()
	b.terminate()
	type result struct {
		err   error
		lines []LogLine
	}
	done := make(chan result, 1)
	go func() {
		var lines []LogLine
		for l := range b.logs {
			lines = append(lines, l)
		}
		done <- result{b.wait(), lines}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			// What kproxy said while shutting down, for the failure's log:
			// the lines of connections it gave up on name them and why.
			for _, l := range r.lines[max(0, len(r.lines)-20):] {
				b.t.Logf("kproxy log after the signal: %v", map[string]any(l))
			}
		}
		return r.lines, r.err
	case <-time.After(40 * time.Second):
		b.t.Fatal("kproxy did not exit within 40s of SIGTERM")
		return nil, nil
	}
}

// WaitReady waits up to 20 seconds for the admin endpoint's /readyz to
// answer 200.
func (b *Binary) WaitReady() {
	b.t.Helper()
	url := "http://" + b.Admin + "/readyz"
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	b.t.Fatalf("%s never answered 200", url)
}
