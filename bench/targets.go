package bench

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/bench/procstat"
	"github.com/kproxy/kproxy/bench/relay"
	"github.com/kproxy/kproxy/internal/freeport"
)

// target is one way of reaching the upstream.
type target struct {
	name string
	desc string
	// seeds are the bootstrap addresses the client is given, and
	// addrMap the client-side address translation every dial goes
	// through (same code path for every target; empty map for direct and
	// kproxy).
	seeds   []string
	addrMap map[string]string
	// tls, when set, is how the client speaks TLS to the target.
	tls *tls.Config
	// sniAddr, when set, is the one address every dial goes to, the TLS
	// server name being the host asked for (kproxy's SNI listener).
	sniAddr string
	// proc is the proxy process; nil for direct.
	proc    *exec.Cmd
	stdin   io.WriteCloser
	logPath string
	// skipped, when set, says why the target is not measured.
	skipped string
	// note is shown with a measured target.
	note    string
	idleRSS int64
	// idleMillicores is the CPU used over idleSeconds without traffic
	// (-idle); nil when not measured.
	idleMillicores *float64
	idleSeconds    float64
	// adminAddr is kproxy's admin endpoint; empty for other processes.
	adminAddr string
}

func (t *target) pid() int {
	if t.proc == nil || t.proc.Process == nil {
		return 0
	}
	return t.proc.Process.Pid
}

// dial is the client's dialer: translate, then dial (and, for a TLS
// target, complete the handshake).
func (t *target) dial(ctx context.Context, network, host string) (net.Conn, error) {
	if to, ok := t.addrMap[host]; ok {
		host = to
	}
	serverName, _, _ := net.SplitHostPort(host)
	if t.sniAddr != "" {
		host = t.sniAddr
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, host)
	if err != nil || t.tls == nil {
		return conn, err
	}
	cfg := t.tls.Clone()
	cfg.ServerName = serverName
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("TLS handshake with %s: %w", host, err)
	}
	return tc, nil
}

// stop ends the target's process: SIGTERM, then SIGKILL after 5s.
func (t *target) stop() {
	if t.proc == nil || t.proc.Process == nil {
		return
	}
	if t.stdin != nil {
		t.stdin.Close()
	}
	t.proc.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { t.proc.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.proc.Process.Kill()
		<-done
	}
}

// childEnv is the environment of every child: ours, with GOMAXPROCS set
// when -procs asks for it.
func childEnv(o *Options) []string {
	env := os.Environ()
	if o.Procs > 0 {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(o.Procs))
	}
	return env
}

// command builds a child process that dies with us (Pdeathsig) and logs to
// logPath.
func command(o *Options, logPath string, name string, args ...string) (*exec.Cmd, *os.File, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Env = childEnv(o)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd, logf, nil
}

func direct(u *upstream) *target {
	return &target{
		name:    TargetDirect,
		desc:    "client to upstream, no proxy",
		seeds:   u.seeds,
		addrMap: map[string]string{},
	}
}

// startRelay starts a relay process with one listener per upstream broker
// (and per seed that is not a broker) and maps each upstream address to its
// listener.
func startRelay(o *Options, u *upstream, name string, pki *benchPKI, workDir string) (*target, error) {
	desc := map[string]string{
		TargetSplice:   "relay process, io.Copy TCP->TCP (splice(2) on Linux), one listener per broker",
		TargetCopy:     "relay process, io.CopyBuffer through a 32 KiB user-space buffer, one listener per broker",
		TargetTLSRelay: "relay process terminating client TLS (crypto/tls), io.Copy to the plaintext upstream, one listener per broker",
	}[name]
	t := &target{name: name, desc: desc, seeds: u.seeds, addrMap: map[string]string{}}
	args := selfCommand(o, "relay")
	switch name {
	case TargetTLSRelay:
		args = append(args, "--mode", string(relay.TLS), "--cert", pki.certFile, "--key", pki.keyFile)
		t.tls = pki.client
	default:
		args = append(args, "--mode", name)
	}
	for _, b := range u.relayTargets() {
		args = append(args, "--target", b)
	}
	t.logPath = filepath.Join(workDir, name+".log")
	err := startChild(o, t, args, func(f []string) {
		if len(f) == 3 && f[0] == "listen" {
			t.addrMap[f[1]] = f[2]
		}
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// startChild starts t's process, a child that prints lines of
// space-separated fields on stdout, each given to onLine, up to "ready";
// closing its stdin stops it (t.stop).
func startChild(o *Options, t *target, args []string, onLine func(fields []string)) error {
	cmd, logf, err := command(o, t.logPath, args[0], args[1:]...)
	if err != nil {
		return err
	}
	defer logf.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if t.stdin, err = cmd.StdinPipe(); err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", t.name, err)
	}
	t.proc = cmd
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) == 1 && f[0] == "ready" {
			go io.Copy(io.Discard, out)
			return nil
		}
		onLine(f)
	}
	t.stop()
	return fmt.Errorf("%s exited before it was ready; log: %s", t.name, tail(t.logPath))
}

// selfCommand is the command line of one of our hidden subcommands.
func selfCommand(o *Options, sub string) []string {
	if len(o.Self) > 0 {
		return append(append([]string(nil), o.Self...), sub)
	}
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	return []string{self, sub}
}

// buildKproxy builds ./cmd/kproxy of the module the working directory is in.
func buildKproxy(ctx context.Context, workDir string, log io.Writer) (string, error) {
	bin := filepath.Join(workDir, "kproxy")
	fmt.Fprintf(log, "building kproxy: go build -o %s github.com/kproxy/kproxy/cmd/kproxy\n", bin)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/kproxy/kproxy/cmd/kproxy")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build kproxy (run from the kproxy module, or pass -kproxy-bin): %w\n%s", err, out)
	}
	return bin, nil
}

// freePort is a loopback port to write into a child's configuration, from
// below the ephemeral range: a port the kernel handed out could go to one
// of the many connections a run opens before the child binds it.
func freePort() (int, error) {
	return freeport.Run("127.0.0.1", 1)
}

// kproxyConfig is the generated configuration: passthrough, quiet logs,
// node listeners on free ports, and the admin endpoint for readiness; with
// pki, the listeners speak TLS; with sni, the SNI listener alone serves
// at bootstrapPort.
func kproxyConfig(u *upstream, bootstrapPort, adminPort int, policy string, pki *benchPKI, sni, vc bool) string {
	var b strings.Builder
	b.WriteString("# generated by kproxy-bench\nupstream:\n  bootstrap_servers:\n")
	for _, s := range u.seeds {
		fmt.Fprintf(&b, "    - %q\n", s)
	}
	switch {
	case vc:
		b.WriteString("listeners:\n  bind_host: 127.0.0.1\n")
		fmt.Fprintf(&b, "virtual_clusters:\n  - name: bench\n    listeners: {bootstrap_port: %d, broker_port_base: 0}\n", bootstrapPort)
		fmt.Fprintf(&b, "    topic_prefix: %q\n    group_prefix: %q\n    transactional_id_prefix: %q\n", VCPrefix, VCPrefix, VCPrefix)
	case sni:
		fmt.Fprintf(&b, "listeners:\n  bind_host: 127.0.0.1\n  port_per_broker: false\n  sni:\n    port: %d\n", bootstrapPort)
		fmt.Fprintf(&b, "    bootstrap_host: %s\n    broker_host_pattern: %q\n", sniBootstrap, sniPattern)
		fmt.Fprintf(&b, "    tls: {cert_file: %q, key_file: %q}\n", pki.sniCertFile, pki.sniKeyFile)
	default:
		fmt.Fprintf(&b, "listeners:\n  bind_host: 127.0.0.1\n  bootstrap_port: %d\n  broker_port_base: 0\n", bootstrapPort)
	}
	if pki != nil && !sni {
		fmt.Fprintf(&b, "  tls: {cert_file: %q, key_file: %q}\n", pki.certFile, pki.keyFile)
	}
	// pprof so that any kproxy target can be profiled during a run.
	fmt.Fprintf(&b, "admin:\n  listen: 127.0.0.1:%d\n  pprof: true\n", adminPort)
	b.WriteString("log:\n  level: warn\n  format: json\n")
	if policy != "" {
		b.WriteString(policy)
	}
	return b.String()
}

// startKproxy writes a configuration, checks it with `kproxy validate` and
// runs kproxy until its /readyz says ready. A configuration that validate
// rejects gives a target with skipped set, not an error.
func startKproxy(ctx context.Context, o *Options, u *upstream, name, bin, policy string, pki *benchPKI, workDir string) (*target, error) {
	desc := "kproxy process, passthrough (no policy)"
	switch {
	case name == TargetKproxyEncryption:
		desc = "kproxy process encrypting the bench topic's record values (AES-256-GCM, DEKs from local-kms on loopback)"
		if u.synthetic {
			desc += "; its upstream serves records encrypted under a local-kms data key, which its consume loads decrypt"
		}
	case name == TargetKproxyLargeMessages:
		desc = "kproxy process with large-message offload configured for the bench topic (SeaweedFS on loopback) but not triggered: threshold above the record size, no trigger header"
	case name == largeRecordTarget:
		desc = "kproxy process offloading the large-record topic's values to SeaweedFS on loopback and resolving them on fetch"
	case feature(name) == TargetKproxyQuotas:
		desc = fmt.Sprintf("kproxy process with %d quota rules, one matching the bench traffic with limits it never reaches", QuotaRules)
	case policy != "" && o.PolicyFile != "":
		desc = "kproxy process with the policy of " + o.PolicyFile
	case policy != "":
		desc = fmt.Sprintf("kproxy process with a %d-rule policy", PolicyRules)
	}
	t := &target{name: name, desc: desc, addrMap: map[string]string{}}
	sni := name == TargetKproxySNI
	if pki != nil {
		t.desc = "kproxy process, passthrough, TLS listeners (client TLS terminated, plaintext upstream)"
		t.tls = pki.client
	}
	if sni {
		t.desc = "kproxy process, passthrough, the SNI listener alone: one TLS port, routed by server name (plaintext upstream)"
	}
	vc := feature(name) == TargetKproxyVC
	if vc {
		t.desc = "kproxy process serving one virtual cluster: topic, group and transactional-id prefix " + VCPrefix + " added and removed"
	}
	bport, err := freePort()
	if err != nil {
		return nil, err
	}
	aport, err := freePort()
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(workDir, name+".yaml")
	if err := os.WriteFile(cfgPath, []byte(kproxyConfig(u, bport, aport, policy, pki, sni, vc)), 0o644); err != nil {
		return nil, err
	}
	validate := exec.CommandContext(ctx, bin, "validate", "--config", cfgPath)
	validate.Env = append(childEnv(o), awsEnv...)
	out, err := validate.CombinedOutput()
	if err != nil {
		t.skipped = fmt.Sprintf("`kproxy validate` rejected the generated configuration %s: %s", filepath.Base(cfgPath), oneLine(string(out), 400))
		return t, nil
	}

	t.logPath = filepath.Join(workDir, name+".log")
	cmd, logf, err := command(o, t.logPath, bin, "--config", cfgPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stdout = logf                    // kproxy logs to stdout
	cmd.Env = append(cmd.Env, awsEnv...) // read only with an encryption or large_messages section
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	t.proc = cmd
	ready := fmt.Sprintf("http://127.0.0.1:%d/readyz", aport)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.stop()
			return nil, fmt.Errorf("%s not ready within 30s; log: %s", name, tail(t.logPath))
		}
		if processExited(cmd.Process.Pid) {
			t.stop()
			return nil, fmt.Errorf("%s exited at start-up; log: %s", name, tail(t.logPath))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.seeds = []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(bport))}
	t.adminAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(aport))
	if sni {
		t.sniAddr = t.seeds[0]
		t.seeds = []string{net.JoinHostPort(sniBootstrap, strconv.Itoa(bport))}
	}
	if policy != "" && feature(name) == TargetKproxyPolicy {
		enforced, detail := probePolicy(ctx, t, o.Topic+"-outside-policy")
		switch {
		case !enforced && o.PolicyFile == "":
			t.stop()
			t.proc = nil
			t.skipped = "kproxy accepted the policy but does not enforce it (this build does not wire the policy filter in?): " + detail
		case !enforced:
			t.note = "the policy file did not deny the probe: " + detail
		}
	}
	return t, nil
}

// probePolicy asks, through t, for the metadata of a topic the generated
// policy does not allow. An enforcing kproxy answers
// TOPIC_AUTHORIZATION_FAILED; one that only parsed the policy forwards the
// request and the upstream answers something else.
func probePolicy(ctx context.Context, t *target, topic string) (bool, string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(t.seeds...), kgo.Dialer(t.dial), kgo.RequestRetries(0))
	if err != nil {
		return false, err.Error()
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return false, fmt.Sprintf("metadata probe for %q failed: %v", topic, err)
	}
	for _, rt := range resp.Topics {
		if rt.ErrorCode == kerr.TopicAuthorizationFailed.Code {
			return true, ""
		}
		return false, fmt.Sprintf("metadata for topic %q, which the policy does not allow, was answered with %v instead of TOPIC_AUTHORIZATION_FAILED", topic, kerr.ErrorForCode(rt.ErrorCode))
	}
	return false, fmt.Sprintf("metadata probe for %q returned no topic", topic)
}

// processExited reports a zombie: exited, not yet reaped.
func processExited(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(data), ')')
	return i < 0 || i+2 >= len(data) || data[i+2] == 'Z'
}

// tail is the last lines of a log file, for error messages.
func tail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return "\n  " + strings.Join(lines, "\n  ")
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}

// recordIdle records the process's resident memory before any load.
func (t *target) recordIdle() {
	if pid := t.pid(); pid != 0 {
		if m, err := procstat.Mem(pid); err == nil {
			t.idleRSS = m.RSS
		}
	}
}
