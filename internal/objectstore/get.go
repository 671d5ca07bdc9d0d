package objectstore

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/kproxy/kproxy/internal/errclass"
)

// Get opens key for reading: the body streams from the store as the
// caller reads, and size is its length. The call timeout bounds the
// request until the body starts; reading it is bounded by ctx. Close the
// body.
func (s *S3) Get(ctx context.Context, key string) (body io.ReadCloser, size int64, err error) {
	ctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(s.timeout, cancel)
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if !timer.Stop() || err != nil {
		cancel()
		if err == nil {
			out.Body.Close()
			err = context.DeadlineExceeded
		}
		return nil, 0, fmt.Errorf("get s3://%s/%s: %w", s.bucket, key, classifyAWS(err))
	}
	if out.ContentLength == nil || *out.ContentLength < 0 {
		out.Body.Close()
		cancel()
		return nil, 0, errclass.Mark(ErrRejected, fmt.Errorf("get s3://%s/%s: the store sent no length", s.bucket, key))
	}
	return &cancelOnClose{ReadCloser: out.Body, cancel: cancel}, aws.ToInt64(out.ContentLength), nil
}

// cancelOnClose releases the request's context with the body.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
