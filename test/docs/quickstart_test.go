package docs

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestQuickStart does what the README's quick start shows: it runs its
// go run command (the demo: kproxy in front of an in-memory cluster),
// then its kcat and curl commands as written, against the ports the
// README names moved to free ones, and a franz-go round trip. It checks
// what a user would look at: the brokers kcat lists are kproxy's ports,
// the record produced comes back, /readyz answers and /metrics has
// kproxy_ series.
func TestQuickStart(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	start, clients := quickStartBlocks(t, root)
	// One run of five free ports, so that the bootstrap listener, the three
	// brokers' and the admin endpoint cannot be handed the same port (two
	// separate draws may return the same one).
	run := testkit.FreePortRun(t, "127.0.0.1", 5)
	bootstrapPort, brokerBase, adminPort := run, run+1, run+4
	bootstrap := "127.0.0.1:" + strconv.Itoa(bootstrapPort)
	admin := "127.0.0.1:" + strconv.Itoa(adminPort)

	exited := runInBackground(t, root, start, []string{
		"KPROXY_BOOTSTRAP_PORT=" + strconv.Itoa(bootstrapPort),
		"KPROXY_BROKER_PORT_BASE=" + strconv.Itoa(brokerBase),
		"KPROXY_ADMIN_LISTEN=" + admin,
	})
	waitReady(t, "http://"+admin+"/readyz", 90*time.Second, exited)

	roundTrip(t, bootstrap, "demo")

	if _, err := exec.LookPath("kcat"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("kcat is not installed (apt-get install kcat): CI must run the README's kcat commands")
		}
		t.Skip("kcat is not installed: the README's kcat commands not run (CI runs them)")
	}
	script := strings.NewReplacer("127.0.0.1:9092", bootstrap, "127.0.0.1:9644", admin).Replace(clients)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's client commands: %v\n%s\n%s", err, script, out)
	}
	for i := range 3 {
		// kcat -L: "broker N at HOST:PORT"; the comment says 9100..9102.
		if want := fmt.Sprintf("at 127.0.0.1:%d", brokerBase+i); !strings.Contains(string(out), want) {
			t.Errorf("kcat -L lists no broker %s (kproxy's port for node %d):\n%s", want, i, out)
		}
	}
	for _, want := range []string{"k1=hello", "ready", "kproxy_"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the README's client commands printed no %q:\n%s", want, out)
		}
	}
}

// quickStartBlocks returns the README's two blocks marked run by
// TestQuickStart: the command that starts the demo, and the clients.
func quickStartBlocks(t *testing.T, root string) (start, clients string) {
	blocks, err := readBlocks(root, "README.md")
	if err != nil {
		t.Fatal(err)
	}
	var mine []string
	for _, b := range blocks {
		if c, err := parseMarker(b.Marker); err == nil && c.Kind == kindRunBy && c.Test == "TestQuickStart" {
			mine = append(mine, b.Body)
		}
	}
	if len(mine) != 2 || !strings.Contains(mine[0], "configs/demo.yaml") || !strings.Contains(mine[1], "kcat") {
		t.Fatalf("want the README's quick start as two blocks marked run by TestQuickStart, the demo's command then the kcat commands; found %q", mine)
	}
	return mine[0], mine[1]
}

// runInBackground starts a block with bash in its own process group, so
// that go run and the kproxy it starts are both stopped when the test ends;
// the channel it returns is closed once the block has exited.
func runInBackground(t *testing.T, dir, script string, env []string) <-chan struct{} {
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(withoutKproxyVariables(os.Environ()), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log, err := os.Create(filepath.Join(t.TempDir(), "demo.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited, done := make(chan error, 1), make(chan struct{})
	go func() {
		exited <- cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			text, _ := os.ReadFile(log.Name())
			t.Logf("the demo's output:\n%s", text)
		}
	})
	return done
}

// waitReady polls url until it answers 200, failing at once if the demo
// exited (exited closed); go run compiles first.
func waitReady(t *testing.T, url string, within time.Duration, exited <-chan struct{}) {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("the demo exited before %s answered 200", url)
		default:
		}
		resp, err := http.Get(url)
		if err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return
		}
	}
	t.Fatalf("%s did not answer 200 within %s", url, within)
}

// roundTrip produces a record through bootstrap with franz-go and reads
// it back.
func roundTrip(t *testing.T, bootstrap, topic string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	key := "quick-start-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte("hello")}).FirstErr(); err != nil {
		t.Fatalf("produce through %s: %v", bootstrap, err)
	}
	for {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("the record produced through %s never came back: %v", bootstrap, err)
		}
		for _, r := range fetches.Records() {
			if string(r.Key) == key && string(r.Value) == "hello" {
				return
			}
		}
	}
}
