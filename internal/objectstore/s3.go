package objectstore

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The connection timeouts: a store that does not answer must fail fast
// into ErrRetriable rather than hold a produce until the client gives up.
// The response timeout runs from the end of the request body, so it also
// covers the store writing one part.
const (
	s3DialTimeout     = 2 * time.Second
	s3TLSTimeout      = 3 * time.Second
	s3ResponseTimeout = 15 * time.Second
	s3MaxAttempts     = 3
)

// S3 is one bucket through the AWS SDK's S3 client.
type S3 struct {
	client   *s3.Client
	bucket   string
	partSize int64
	timeout  time.Duration
}

// NewS3 checks cfg and builds the client. It does not call the store: the
// credentials chain is resolved at the first call.
func NewS3(ctx context.Context, cfg Config) (*S3, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	httpClient := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = s3DialTimeout }).
		WithTransportOptions(func(t *http.Transport) {
			t.TLSHandshakeTimeout = s3TLSTimeout
			t.ResponseHeaderTimeout = s3ResponseTimeout
		})
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithRegion(cfg.Region),
		awsconfig.WithHTTPClient(httpClient),
		awsconfig.WithRetryMaxAttempts(s3MaxAttempts),
	}
	if cfg.Credentials != nil {
		opts = append(opts, awsconfig.WithCredentialsProvider(cfg.Credentials))
	}
	sdk, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("large_messages.store.s3: loading the AWS configuration: %w", err)
	}
	client := s3.NewFromConfig(sdk, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
		// The value's integrity is the pointer's SHA-256; the SDK's own
		// CRC trailers are not understood by every S3-compatible server.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &S3{client: client, bucket: cfg.Bucket, partSize: cfg.partSize(), timeout: cfg.callTimeout()}, nil
}

// Bucket is the bucket the objects go to: the pointer names it.
func (s *S3) Bucket() string { return s.bucket }

// Delete removes key. Deleting a key that does not exist succeeds (S3
// does not tell).
func (s *S3) Delete(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key}); err != nil {
		return fmt.Errorf("delete s3://%s/%s: %w", s.bucket, key, classifyAWS(err))
	}
	return nil
}
