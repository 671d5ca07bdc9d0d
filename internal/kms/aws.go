package kms

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	awskms "github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/kproxy/kproxy/internal/errclass"
)

// AWSConfig is `kms.aws_kms`: where AWS KMS is. Credentials come from the
// SDK's usual chain (environment, shared files, web identity, container
// and instance roles) unless Credentials is set.
type AWSConfig struct {
	// Endpoint is the KMS endpoint URL; empty: the region's public one.
	// Plain http is accepted only towards a loopback address: the
	// GenerateDataKey response carries the plaintext DEK.
	Endpoint string
	// Region signs the requests and names the default endpoint.
	Region string
	// CallTimeout bounds one call including the SDK's retries;
	// 0: DefaultCallTimeout.
	CallTimeout time.Duration
	// Credentials replaces the default chain (tests).
	Credentials aws.CredentialsProvider
}

// DefaultCallTimeout bounds one KMS call, retries included. A produce or
// fetch waits for it at most this long before its partitions get a
// retriable error.
const DefaultCallTimeout = 5 * time.Second

// The connection timeouts: a KMS that does not answer must fail fast into
// ErrRetriable rather than hold requests until the client gives up.
const (
	awsDialTimeout     = 2 * time.Second
	awsTLSTimeout      = 3 * time.Second
	awsResponseTimeout = 4 * time.Second
	awsMaxAttempts     = 3
)

// AWS is AWS KMS (or a KMS speaking its API) through the official SDK's
// KMS client.
type AWS struct {
	client  *awskms.Client
	timeout time.Duration
}

// NewAWS checks cfg and builds the client. It does not call KMS: the
// credentials chain is resolved at the first call.
func NewAWS(ctx context.Context, cfg AWSConfig) (*AWS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	httpClient := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = awsDialTimeout }).
		WithTransportOptions(func(t *http.Transport) {
			t.TLSHandshakeTimeout = awsTLSTimeout
			t.ResponseHeaderTimeout = awsResponseTimeout
		})
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithRegion(cfg.Region),
		awsconfig.WithHTTPClient(httpClient),
		awsconfig.WithRetryMaxAttempts(awsMaxAttempts),
	}
	if cfg.Credentials != nil {
		opts = append(opts, awsconfig.WithCredentialsProvider(cfg.Credentials))
	}
	sdk, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("kms.aws_kms: loading the AWS configuration: %w", err)
	}
	client := awskms.NewFromConfig(sdk, func(o *awskms.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
	})
	timeout := cfg.CallTimeout
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	return &AWS{client: client, timeout: timeout}, nil
}

// Validate checks the configuration, naming the key at fault.
func (cfg AWSConfig) Validate() error {
	if cfg.Region == "" {
		return errors.New("kms.aws_kms.region: required")
	}
	if cfg.Endpoint == "" {
		return nil
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("kms.aws_kms.endpoint %q: not an absolute URL", cfg.Endpoint)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("kms.aws_kms.endpoint %q: http only towards a loopback address (the KMS answers with plaintext data keys); use https", cfg.Endpoint)
		}
	default:
		return fmt.Errorf("kms.aws_kms.endpoint %q: the scheme must be https", cfg.Endpoint)
	}
	return nil
}

// GenerateDataKey asks KMS for an AES-256 data key under keyID.
func (a *AWS) GenerateDataKey(ctx context.Context, keyID string) (DataKey, error) {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	out, err := a.client.GenerateDataKey(ctx, &awskms.GenerateDataKeyInput{
		KeyId:   aws.String(keyID),
		KeySpec: types.DataKeySpecAes256,
	})
	if err != nil {
		return DataKey{}, fmt.Errorf("generate data key under %s: %w", keyID, classifyAWS(err, false))
	}
	if len(out.Plaintext) != DEKSize || len(out.CiphertextBlob) == 0 {
		return DataKey{}, errclass.Mark(ErrRejected, fmt.Errorf("generate data key under %s: KMS returned a %d-byte key and a %d-byte blob, want %d and some",
			keyID, len(out.Plaintext), len(out.CiphertextBlob), DEKSize))
	}
	return DataKey{Plaintext: out.Plaintext, Wrapped: out.CiphertextBlob, KeyID: aws.ToString(out.KeyId)}, nil
}

// Decrypt asks KMS to unwrap a data key. The blob names its KEK.
func (a *AWS) Decrypt(ctx context.Context, wrapped []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	out, err := a.client.Decrypt(ctx, &awskms.DecryptInput{CiphertextBlob: wrapped})
	if err != nil {
		return nil, fmt.Errorf("decrypt data key: %w", classifyAWS(err, true))
	}
	if len(out.Plaintext) != DEKSize {
		return nil, errclass.Mark(ErrRejected, fmt.Errorf("decrypt data key under %s: KMS returned a %d-byte key, want %d",
			aws.ToString(out.KeyId), len(out.Plaintext), DEKSize))
	}
	return out.Plaintext, nil
}
