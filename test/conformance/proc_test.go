package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// proc is a client process (kcat, python, a Kafka tool's JVM) whose TCP
// connections are sampled from /proc while it runs, so that a test can
// check it only ever connected to kproxy.
type proc struct {
	name           string
	cmd            *exec.Cmd
	stdout, stderr logbuf.Buffer
	done           chan struct{}
	err            error
	cancel         context.CancelFunc

	mu      sync.Mutex
	remotes map[string]int // remote host:port -> samples it was seen in
}

// startProc starts name with args (and stdin, if not nil), killed after
// timeout or when the test ends.
func startProc(t *testing.T, timeout time.Duration, stdin []byte, env []string, name string, args ...string) *proc {
	t.Helper()
	var r io.Reader
	if stdin != nil {
		r = bytes.NewReader(stdin)
	}
	return startProcReader(t, timeout, r, env, name, args...)
}

// startProcReader is startProc with standard input read from stdin.
func startProcReader(t *testing.T, timeout time.Duration, stdin io.Reader, env []string, name string, args ...string) *proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = stdin
	p := &proc{name: filepath.Base(name), cmd: cmd, done: make(chan struct{}), cancel: cancel, remotes: map[string]int{}}
	if len(args) > 0 && p.name == "tool.sh" {
		p.name = args[0]
	}
	cmd.Stdout, cmd.Stderr = &p.stdout, &p.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		tick := time.NewTicker(40 * time.Millisecond)
		defer tick.Stop()
		for {
			p.sample()
			select {
			case <-p.done:
				return
			case <-tick.C:
			}
		}
	}()
	go func() {
		p.err = cmd.Wait()
		if ctx.Err() == context.DeadlineExceeded {
			p.err = fmt.Errorf("%w (timed out after %s)", p.err, timeout)
		}
		close(p.done)
		cancel()
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// wait waits for the process to exit and returns its error.
func (p *proc) wait() error {
	<-p.done
	return p.err
}

// stop sends SIGTERM (a JVM runs its shutdown hooks) and waits.
func (p *proc) stop() error {
	select {
	case <-p.done:
	default:
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	return p.wait()
}

// failure describes a failed run for t.Fatalf.
func (p *proc) failure(err error) string {
	return fmt.Sprintf("%s: %v\nstderr (last lines):\n%s\nstdout (last lines):\n%s", p.name, err,
		lastLines(p.stderr.String(), 30), lastLines(p.stdout.String(), 10))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// sample records the remote end of every TCP socket the process holds.
func (p *proc) sample() {
	pid := p.cmd.Process.Pid
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	if len(inodes) == 0 {
		return
	}
	for _, f := range []string{"tcp", "tcp6"} {
		fh, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || !inodes[fields[9]] {
				continue
			}
			if addr, ok := decodeProcAddr(fields[2]); ok {
				p.mu.Lock()
				p.remotes[addr]++
				p.mu.Unlock()
			}
		}
		fh.Close()
	}
}

// decodeProcAddr decodes /proc/net/tcp{,6}'s "HEXIP:HEXPORT".
func decodeProcAddr(s string) (string, bool) {
	ipHex, portHex, ok := strings.Cut(s, ":")
	if !ok {
		return "", false
	}
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil || port == 0 {
		return "", false
	}
	raw, err := hex.DecodeString(ipHex)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return "", false
	}
	// The kernel prints each 32-bit word in host (little-endian) order.
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	ip := net.IP(raw)
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	return net.JoinHostPort(ip.String(), strconv.FormatUint(port, 10)), true
}

// librdkafkaConnRE matches librdkafka's debug=broker lines about its
// connections: "Connecting to ipv4#127.0.0.1:9092 (plaintext) with socket 7".
// The Java client logs "Initiating connection to node 127.0.0.1:9092 (id:
// -1 rack: null) using address /127.0.0.1" (conformance's log4j2 config).
var (
	librdkafkaConnRE = regexp.MustCompile(`Connect(?:ing|ed) to ipv[46]#(\S+?:\d+)`)
	javaConnRE       = regexp.MustCompile(`Initiating connection to node (\S+:\d+) \(id:`)
)

// Remotes returns the remote addresses seen, sorted: sampled sockets and,
// for librdkafka clients run with debug=broker, every connection it logged.
func (p *proc) Remotes() []string {
	stderr := p.stderr.String()
	for _, m := range append(librdkafkaConnRE.FindAllStringSubmatch(stderr, -1), javaConnRE.FindAllStringSubmatch(stderr, -1)...) {
		a := strings.Trim(m[1], "[]")
		if host, port, err := net.SplitHostPort(m[1]); err == nil {
			a = net.JoinHostPort(strings.Trim(host, "[]"), port)
		}
		p.mu.Lock()
		p.remotes[a]++
		p.mu.Unlock()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for a := range p.remotes {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// checkSockets fails t if the process ever held a connection to the
// upstream's own listeners, or to anything that is not kproxy px (or, for
// e.oauth, its identity provider), and unless it was seen connected to
// kproxy at all.
func (e *env) checkSockets(t *testing.T, px *kproxytest.Kproxy, p *proc) {
	t.Helper()
	ok := e.proxyAddrs(px)
	toProxy := 0
	for _, a := range p.Remotes() {
		_, port, _ := net.SplitHostPort(a)
		n, _ := strconv.Atoi(port)
		switch {
		case e.ports[n]:
			t.Errorf("%s connected to the upstream broker %s directly, bypassing kproxy", p.name, a)
		case ok[a]:
			toProxy++
		case px == e.oauth && a == e.idpAddr():
		default:
			t.Errorf("%s connected to %s, which is not kproxy", p.name, a)
		}
	}
	if toProxy == 0 {
		t.Errorf("%s was never seen connected to kproxy (sockets seen: %v): the socket check is vacuous", p.name, p.Remotes())
	}
}

// run runs a process to completion and fails t if it fails.
func run(t *testing.T, timeout time.Duration, stdin []byte, env []string, name string, args ...string) *proc {
	t.Helper()
	p := startProc(t, timeout, stdin, env, name, args...)
	if err := p.wait(); err != nil {
		t.Fatal(p.failure(err))
	}
	return p
}
