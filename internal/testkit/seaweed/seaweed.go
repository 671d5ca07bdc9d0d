// Package seaweed runs SeaweedFS (master, volume, filer and S3 gateway in
// one `weed server` process), a real server of the S3 API that checks
// request signatures, for a test. It is a package of its own so that only
// the tests that need S3 link the SDK's S3 client.
package seaweed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/logbuf"
)

// BinEnv names the weed binary (test/seaweedfs/build.sh builds it).
const BinEnv = "KPROXY_WEED_BIN"

// Region is what clients sign for; SeaweedFS accepts any.
const Region = "eu-west-1"

// Bucket is the bucket Start creates.
const Bucket = "kproxy-large"

// The one identity the server knows: requests signed with anything else
// are refused.
const (
	accessKey = "kproxy-test"
	secretKey = "kproxy-test-secret"
)

// Credentials are the identity's keys.
func Credentials() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(accessKey, secretKey, "")
}

// WrongCredentials are keys the server does not know.
func WrongCredentials() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(accessKey, "not-the-secret", "")
}

// The ports `weed server` listens on, all on 127.0.0.1, in this order
// from one run of free ports (gRPC ports would default to port+10000).
var portFlags = []string{"master.port", "master.port.grpc", "volume.port", "volume.port.grpc",
	"filer.port", "filer.port.grpc", "s3.port", "s3.port.grpc"}

// Server is a running `weed server` with an S3 gateway.
type Server struct {
	t      testing.TB
	s3Port int
	bin    string
	args   []string
	cmd    *exec.Cmd
	exited chan error
	logs   *logbuf.Buffer // written while the process runs
	// Admin is an S3 client signed with Credentials.
	Admin *s3.Client
}

// Start starts SeaweedFS with its data in a temporary directory, waits
// until the S3 gateway answers and creates Bucket; it stops at the end of
// the test. Without KPROXY_WEED_BIN the test is skipped, but fails in CI
// (CI set), where the binary must be there.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := testkit.ToolBinary(t, BinEnv, "build it with test/seaweedfs/build.sh and point "+BinEnv+" at the path it prints (.ci/run does)")
	dir := t.TempDir()
	// Unix socket paths are limited to about 100 bytes: a short directory
	// of their own.
	sockets, err := os.MkdirTemp("", "weed")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockets) })
	identities := filepath.Join(dir, "s3.json")
	if err := os.WriteFile(identities, []byte(identityConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	base := testkit.FreePortRun(t, "127.0.0.1", len(portFlags))
	args := []string{"-logtostderr", "server",
		"-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir=" + filepath.Join(dir, "data"),
		"-master.telemetry=false", "-master.volumeSizeLimitMB=256", "-volume.max=16",
		"-filer", "-filer.localSocket=" + filepath.Join(sockets, "filer.sock"),
		"-s3", "-s3.config=" + identities, "-s3.localSocket=" + filepath.Join(sockets, "s3.sock"),
		"-s3.port.iceberg=0", "-s3.port.lance=0"}
	for i, flag := range portFlags {
		args = append(args, fmt.Sprintf("-%s=%d", flag, base+i))
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, s3Port: base + 6, bin: bin, args: args, logs: &logbuf.Buffer{}}
	s.Admin = s3.New(s3.Options{Region: Region, Credentials: Credentials(),
		BaseEndpoint: aws.String(s.Endpoint()), UsePathStyle: true})
	s.start()
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("weed log:\n%s", s.logs)
		}
	})
	s.untilOK("create bucket "+Bucket, func(ctx context.Context) error {
		_, err := s.Admin.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(Bucket)})
		return err
	})
	// The first write waits for the master to grow volumes (seconds):
	// wait for it here, so that a test's first write is as fast as any.
	probe := aws.String(".kproxy-probe")
	s.untilOK("write a first object", func(ctx context.Context) error {
		_, err := s.Admin.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(Bucket), Key: probe, Body: strings.NewReader("ok")})
		return err
	})
	s.untilOK("delete the first object", func(ctx context.Context) error {
		_, err := s.Admin.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(Bucket), Key: probe})
		return err
	})
	return s
}

// start runs the process.
func (s *Server) start() {
	s.cmd = exec.Command(s.bin, s.args...)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start %s: %v", s.bin, err)
	}
	s.exited = make(chan error, 1)
	go func() { s.exited <- s.cmd.Wait() }()
}

// Restart starts a stopped server again on the same ports and data, and
// waits until the bucket answers.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
	s.untilOK("serve the bucket again", func(ctx context.Context) error {
		_, err := s.Admin.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(Bucket)})
		return err
	})
}

// identityConfig is SeaweedFS's S3 identity file: one identity with every
// right, so that the gateway checks every request's signature.
const identityConfig = `{"identities":[{"name":"kproxy","credentials":[{"accessKey":"` + accessKey +
	`","secretKey":"` + secretKey + `"}],"actions":["Admin","Read","List","Tagging","Write"]}]}`

// Endpoint is the S3 gateway's URL (path-style addressing).
func (s *Server) Endpoint() string {
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(s.s3Port))
}

// untilOK retries do while the gateway, filer and volume server come
// up, for 60 s at most.
func (s *Server) untilOK(what string, do func(context.Context) error) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := do(testkit.Context(s.t, 10*time.Second))
		if err == nil {
			return
		}
		select {
		case exitErr := <-s.exited:
			s.cmd = nil
			s.t.Fatalf("weed exited: %v\n%s", exitErr, s.logs)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("SeaweedFS S3 did not %s within 60s: %v\n%s", what, err, s.logs)
		}
	}
}

// Stop ends the process; requests then fail to connect.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	if err := <-s.exited; err != nil && !errors.As(err, new(*exec.ExitError)) {
		s.t.Logf("weed: %v", err)
	}
	s.cmd = nil
}
