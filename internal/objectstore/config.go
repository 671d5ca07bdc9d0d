package objectstore

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Config is `large_messages.store.s3`: where the bucket is. Credentials
// come from the SDK's usual chain (environment, shared files, web
// identity, container and instance roles) unless Credentials is set.
type Config struct {
	// Endpoint is the S3 endpoint URL; empty: the region's AWS endpoint.
	// Plain http is accepted only towards a loopback address: the
	// objects are record values.
	Endpoint string
	// Bucket holds the objects; it must exist.
	Bucket string
	// Region signs the requests and names the default endpoint.
	Region string
	// PathStyle addresses the bucket in the path (endpoint/bucket/key)
	// instead of the host name (bucket.endpoint/key); most S3-compatible
	// servers want it.
	PathStyle bool
	// PartSize is the size of one multipart upload part and the largest
	// value sent in a single PUT; 0: DefaultPartSize. A Put holds one part
	// in memory.
	PartSize int64
	// CallTimeout bounds one request (a PUT, one part, a DELETE, a GET
	// until its body starts) with the SDK's retries; 0: DefaultCallTimeout.
	CallTimeout time.Duration
	// Credentials replaces the default chain (tests).
	Credentials aws.CredentialsProvider
}

// The bounds of a part: S3 refuses parts under 5 MiB but the last, and
// more than 10000 parts.
const (
	MinPartSize     = 5 << 20
	MaxPartSize     = 5 << 30
	DefaultPartSize = 8 << 20
	maxParts        = 10000
)

// DefaultCallTimeout bounds one request, retries included.
const DefaultCallTimeout = 30 * time.Second

// Validate checks the configuration, naming the key at fault.
func (cfg Config) Validate() error {
	if cfg.Bucket == "" {
		return errors.New("large_messages.store.s3.bucket: required")
	}
	if cfg.Region == "" {
		return errors.New("large_messages.store.s3.region: required")
	}
	if cfg.PartSize != 0 && (cfg.PartSize < MinPartSize || cfg.PartSize > MaxPartSize) {
		return fmt.Errorf("large_messages.store.s3.part_size %d: between %d and %d bytes", cfg.PartSize, MinPartSize, MaxPartSize)
	}
	if cfg.Endpoint == "" {
		return nil
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("large_messages.store.s3.endpoint %q: not an absolute URL", cfg.Endpoint)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("large_messages.store.s3.endpoint %q: http only towards a loopback address (the objects are record values); use https", cfg.Endpoint)
		}
	default:
		return fmt.Errorf("large_messages.store.s3.endpoint %q: the scheme must be https", cfg.Endpoint)
	}
	return nil
}

func (cfg Config) partSize() int64 {
	if cfg.PartSize == 0 {
		return DefaultPartSize
	}
	return cfg.PartSize
}

func (cfg Config) callTimeout() time.Duration {
	if cfg.CallTimeout <= 0 {
		return DefaultCallTimeout
	}
	return cfg.CallTimeout
}
