package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kproxy/kproxy/internal/freeport"
	"github.com/kproxy/kproxy/internal/objectstore"
)

// WeedBinEnv names the SeaweedFS `weed` binary the large-message targets
// need, as for kproxy's own tests (internal/testkit/seaweed;
// test/seaweedfs/build.sh builds it).
const WeedBinEnv = "KPROXY_WEED_BIN"

// The bucket and region of the bench's store.
const (
	largeBucket = "kproxy-bench-large"
	largeRegion = "eu-west-1"
)

// The one S3 identity of the bench's SeaweedFS: the keys of awsEnv, so
// that kproxy, reading them from its environment, signs as it.
const (
	benchAccessKey = "kproxy-bench"
	benchSecretKey = "kproxy-bench-secret"
)

// weedIdentities is SeaweedFS's S3 identity file: one identity with every
// right, so that the gateway checks every request's signature, as a real
// store does.
const weedIdentities = `{"identities":[{"name":"kproxy-bench","credentials":[{"accessKey":"` + benchAccessKey +
	`","secretKey":"` + benchSecretKey + `"}],"actions":["Admin","Read","List","Tagging","Write"]}]}`

// weedPortFlags are the ports `weed server` listens on, all on 127.0.0.1,
// in this order from one run of free ports (gRPC ports would otherwise
// default to port+10000).
var weedPortFlags = []string{"master.port", "master.port.grpc", "volume.port", "volume.port.grpc",
	"filer.port", "filer.port.grpc", "s3.port", "s3.port.grpc"}

// store is the bench's SeaweedFS: the process, its S3 endpoint, and the
// bench's own client of the bucket (the direct uploads and downloads).
type store struct {
	proc     *target
	endpoint string
	admin    *s3.Client
	objects  *objectstore.S3
	sockets  string
}

func (s *store) stop() {
	s.proc.stop()
	os.RemoveAll(s.sockets)
}

// startSeaweed runs `weed server` (master, volume, filer and S3 gateway)
// on loopback with its data under workDir, as internal/testkit/seaweed
// does for the tests, creates the bucket and waits until a first object
// can be written (the master grows its volumes on the first write).
func startSeaweed(ctx context.Context, o *Options, workDir string) (*store, error) {
	base, err := freeport.Run("127.0.0.1", len(weedPortFlags))
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(workDir, "weed")
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		return nil, err
	}
	identities := filepath.Join(dir, "s3.json")
	if err := os.WriteFile(identities, []byte(weedIdentities), 0o600); err != nil {
		return nil, err
	}
	// Unix socket paths are limited to about 100 bytes, and a -workdir may
	// be deep: a short directory of their own.
	sockets, err := os.MkdirTemp("", "weed")
	if err != nil {
		return nil, err
	}
	args := []string{"-logtostderr", "server",
		"-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir=" + filepath.Join(dir, "data"),
		"-master.telemetry=false", "-master.volumeSizeLimitMB=256", "-volume.max=32",
		"-filer", "-filer.localSocket=" + filepath.Join(sockets, "filer.sock"),
		"-s3", "-s3.config=" + identities, "-s3.localSocket=" + filepath.Join(sockets, "s3.sock"),
		"-s3.port.iceberg=0", "-s3.port.lance=0"}
	for i, flag := range weedPortFlags {
		args = append(args, fmt.Sprintf("-%s=%d", flag, base+i))
	}
	t := &target{name: "seaweedfs", logPath: filepath.Join(workDir, "weed.log")}
	cmd, logf, err := command(o, t.logPath, o.WeedBin, args...)
	if err != nil {
		os.RemoveAll(sockets)
		return nil, err
	}
	defer logf.Close()
	cmd.Stdout = logf
	if err := cmd.Start(); err != nil {
		os.RemoveAll(sockets)
		return nil, fmt.Errorf("start SeaweedFS %s: %w", o.WeedBin, err)
	}
	t.proc = cmd
	s := &store{proc: t, sockets: sockets,
		endpoint: "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(base+6))}
	creds := credentials.NewStaticCredentialsProvider(benchAccessKey, benchSecretKey, "")
	s.admin = s3.New(s3.Options{Region: largeRegion, Credentials: creds, BaseEndpoint: aws.String(s.endpoint), UsePathStyle: true})
	if s.objects, err = objectstore.NewS3(ctx, objectstore.Config{Endpoint: s.endpoint, Bucket: largeBucket, Region: largeRegion,
		PathStyle: true, CallTimeout: 2 * time.Minute, Credentials: creds}); err != nil {
		s.stop()
		return nil, err
	}
	probe := ".kproxy-bench-probe"
	for _, step := range []struct {
		what string
		do   func(context.Context) error
	}{
		{"create bucket " + largeBucket, func(ctx context.Context) error {
			_, err := s.admin.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(largeBucket)})
			return err
		}},
		{"write a first object", func(ctx context.Context) error {
			_, err := s.objects.Put(ctx, probe, strings.NewReader("ok"), 2, "")
			return err
		}},
		{"delete the first object", func(ctx context.Context) error { return s.objects.Delete(ctx, probe) }},
	} {
		if err := s.untilOK(ctx, step.what, step.do); err != nil {
			s.stop()
			return nil, err
		}
	}
	return s, nil
}

// untilOK retries do while the gateway, filer and volume server come up,
// for 90 s at most.
func (s *store) untilOK(ctx context.Context, what string, do func(context.Context) error) error {
	deadline := time.Now().Add(90 * time.Second)
	for {
		callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := do(callCtx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if processExited(s.proc.pid()) {
			return fmt.Errorf("SeaweedFS exited before it could %s; log: %s", what, tail(s.proc.logPath))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("SeaweedFS did not %s within 90s: %w; log: %s", what, err, tail(s.proc.logPath))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// objectCount is how many objects the bucket holds.
func (s *store) objectCount(ctx context.Context) (int, error) {
	n := 0
	pages := s3.NewListObjectsV2Paginator(s.admin, &s3.ListObjectsV2Input{Bucket: aws.String(largeBucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("list s3://%s: %w", largeBucket, err)
		}
		n += len(page.Contents)
	}
	return n, nil
}
