// Package localkms runs local-kms, a real implementation of the AWS KMS
// API, for a test, and manages its keys through the AWS SDK's KMS client.
// It is a package of its own so that only the tests that need a KMS link
// the SDK, not every test that imports testkit.
package localkms

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awskms "github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/kproxy/kproxy/internal/testkit"
)

// BinEnv names the local-kms binary (.ci/run builds it from
// test/localkms, a module of its own).
const BinEnv = "KPROXY_LOCALKMS_BIN"

// Region is the region local-kms writes into key ARNs and that
// clients sign for.
const Region = "eu-west-1"

// Credentials are what clients of local-kms sign with: it checks
// no signature, but the SDK signs every request.
func Credentials() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider("kproxy-test", "kproxy-test-secret", "")
}

// Server is a local-kms process serving the AWS KMS API on 127.0.0.1,
// with an admin client for the keys a test needs.
type Server struct {
	t       testing.TB
	bin     string
	addr    string
	dataDir string // kept across Stop and Restart: keys survive
	cmd     *exec.Cmd
	exited  chan error
	logs    *callLog
	Admin   *awskms.Client
}

// Start starts local-kms on a free port of 127.0.0.1 and waits
// until it answers; it stops at the end of the test. Without
// KPROXY_LOCALKMS_BIN the test is skipped, but fails in CI (CI set), where
// the binary must be there.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := testkit.ToolBinary(t, BinEnv, "build it with `cd test/localkms && go build -o DIR/local-kms .` and point "+BinEnv+" at it (.ci/run does)")
	k := &Server{t: t, bin: bin, dataDir: t.TempDir(),
		addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(testkit.FreePort(t)))}
	k.Admin = awskms.New(awskms.Options{
		Region:       Region,
		Credentials:  Credentials(),
		BaseEndpoint: aws.String(k.Endpoint()),
	})
	k.run()
	t.Cleanup(func() {
		k.Stop()
		if t.Failed() {
			t.Logf("local-kms log:\n%s", k.logs)
		}
	})
	return k
}

// Log is what the running process (since its last start) has logged:
// local-kms logs every call it answers, such as "Data key generated with
// plaintext: KEY-ARN" for a GenerateDataKey under that key.
func (k *Server) Log() string { return k.logs.String() }

// Endpoint is the URL clients send KMS requests to.
func (k *Server) Endpoint() string { return "http://" + k.addr }

// Restart starts the process again on the same address and data, after
// Stop: to see a client recover.
func (k *Server) Restart() {
	k.t.Helper()
	k.run()
}

// run starts the process and waits until it answers.
func (k *Server) run() {
	k.t.Helper()
	if k.cmd != nil {
		k.t.Fatal("local-kms is already running")
	}
	k.logs = &callLog{}
	cmd := exec.Command(k.bin, "-addr", k.addr, "-data", k.dataDir, "-region", Region)
	cmd.Stdout, cmd.Stderr = k.logs, k.logs
	if err := cmd.Start(); err != nil {
		k.t.Fatalf("start local-kms: %v", err)
	}
	k.cmd, k.exited = cmd, make(chan error, 1)
	go func() { k.exited <- cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for !k.answers() {
		select {
		case err := <-k.exited:
			k.cmd = nil
			k.t.Fatalf("local-kms exited: %v\n%s", err, k.logs)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("local-kms did not answer on %s within 20s\n%s", k.addr, k.logs)
		}
	}
}

// Stop ends the process; requests then fail to connect.
func (k *Server) Stop() {
	if k.cmd == nil {
		return
	}
	k.cmd.Process.Kill()
	<-k.exited
	k.cmd = nil
}

// answers tells whether local-kms serves a ListKeys request.
func (k *Server) answers() bool {
	req, err := http.NewRequest(http.MethodPost, k.Endpoint(), strings.NewReader("{}"))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "TrentService.ListKeys")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// CreateKey creates a symmetric encryption key and returns its ARN.
func (k *Server) CreateKey() string {
	k.t.Helper()
	out, err := k.Admin.CreateKey(k.ctx(), &awskms.CreateKeyInput{KeySpec: types.KeySpecSymmetricDefault, KeyUsage: types.KeyUsageTypeEncryptDecrypt})
	if err != nil {
		k.t.Fatalf("local-kms CreateKey: %v", err)
	}
	return aws.ToString(out.KeyMetadata.Arn)
}

// CreateAlias points alias (alias/...) at keyID.
func (k *Server) CreateAlias(alias, keyID string) {
	k.t.Helper()
	if _, err := k.Admin.CreateAlias(k.ctx(), &awskms.CreateAliasInput{AliasName: aws.String(alias), TargetKeyId: aws.String(keyID)}); err != nil {
		k.t.Fatalf("local-kms CreateAlias %s -> %s: %v", alias, keyID, err)
	}
}

// UpdateAlias points an existing alias at another key: key rotation.
func (k *Server) UpdateAlias(alias, keyID string) {
	k.t.Helper()
	if _, err := k.Admin.UpdateAlias(k.ctx(), &awskms.UpdateAliasInput{AliasName: aws.String(alias), TargetKeyId: aws.String(keyID)}); err != nil {
		k.t.Fatalf("local-kms UpdateAlias %s -> %s: %v", alias, keyID, err)
	}
}

// DisableKey disables keyID.
func (k *Server) DisableKey(keyID string) {
	k.t.Helper()
	if _, err := k.Admin.DisableKey(k.ctx(), &awskms.DisableKeyInput{KeyId: aws.String(keyID)}); err != nil {
		k.t.Fatalf("local-kms DisableKey %s: %v", keyID, err)
	}
}

// ScheduleKeyDeletion puts keyID in the pending-deletion state (7 days,
// the shortest AWS allows).
func (k *Server) ScheduleKeyDeletion(keyID string) {
	k.t.Helper()
	if _, err := k.Admin.ScheduleKeyDeletion(k.ctx(), &awskms.ScheduleKeyDeletionInput{KeyId: aws.String(keyID), PendingWindowInDays: aws.Int32(7)}); err != nil {
		k.t.Fatalf("local-kms ScheduleKeyDeletion %s: %v", keyID, err)
	}
}

func (k *Server) ctx() context.Context { return testkit.Context(k.t, 10*time.Second) }

// callLog is the process's output, written by exec's copying goroutine
// while a test reads it.
type callLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *callLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *callLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
