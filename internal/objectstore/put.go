package objectstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/kproxy/kproxy/internal/errclass"
)

// Stored is what Put wrote.
type Stored struct {
	Size int64
	// SHA256 is the value's SHA-256, lowercase hex (the pointer's
	// "sha256").
	SHA256 string
}

// Put writes size bytes read from value to key: in one PUT up to the part
// size, else as a multipart upload, holding one part in memory. The
// SHA-256 is computed while the bytes go by. value must hold exactly size
// bytes (else ErrRejected, and nothing is left in the store).
func (s *S3) Put(ctx context.Context, key string, value io.Reader, size int64, contentType string) (Stored, error) {
	if size < 0 || size > s.partSize*maxParts {
		return Stored{}, errclass.Mark(ErrRejected, fmt.Errorf("put s3://%s/%s: size %d outside 0..%d", s.bucket, key, size, s.partSize*maxParts))
	}
	sum := sha256.New()
	in := &exactReader{r: io.TeeReader(value, sum), left: size}
	var err error
	if size <= s.partSize {
		err = s.putSingle(ctx, key, in, size, contentType)
	} else {
		err = s.putMultipart(ctx, key, in, size, contentType)
	}
	if err != nil {
		return Stored{}, fmt.Errorf("put s3://%s/%s (%d bytes): %w", s.bucket, key, size, err)
	}
	return Stored{Size: size, SHA256: hex.EncodeToString(sum.Sum(nil))}, nil
}

func (s *S3) putSingle(ctx context.Context, key string, in *exactReader, size int64, contentType string) error {
	buf := make([]byte, size)
	if err := in.fill(buf); err != nil {
		return err
	}
	if err := in.atEnd(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: &key,
		Body: bytes.NewReader(buf), ContentLength: &size, ContentType: optional(contentType)})
	return classifyAWS(err)
}

func (s *S3) putMultipart(ctx context.Context, key string, in *exactReader, size int64, contentType string) error {
	created, err := withTimeout(ctx, s.timeout, func(ctx context.Context) (*s3.CreateMultipartUploadOutput, error) {
		return s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: &key, ContentType: optional(contentType)})
	})
	if err != nil {
		return fmt.Errorf("create multipart upload: %w", classifyAWS(err))
	}
	uploadID := created.UploadId
	parts, err := s.uploadParts(ctx, key, uploadID, in, size)
	if err == nil {
		_, err = withTimeout(ctx, s.timeout, func(ctx context.Context) (*s3.CompleteMultipartUploadOutput, error) {
			return s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &s.bucket, Key: &key,
				UploadId: uploadID, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
		})
		if err != nil {
			err = fmt.Errorf("complete multipart upload: %w", classifyAWS(err))
		}
	}
	if err != nil {
		s.abort(ctx, key, uploadID)
	}
	return err
}

func (s *S3) uploadParts(ctx context.Context, key string, uploadID *string, in *exactReader, size int64) ([]types.CompletedPart, error) {
	buf := make([]byte, s.partSize)
	var parts []types.CompletedPart
	for number := int32(1); in.left > 0; number++ {
		part := buf[:min(s.partSize, in.left)]
		if err := in.fill(part); err != nil {
			return nil, err
		}
		n := int64(len(part))
		out, err := withTimeout(ctx, s.timeout, func(ctx context.Context) (*s3.UploadPartOutput, error) {
			return s.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: &s.bucket, Key: &key, UploadId: uploadID,
				PartNumber: &number, Body: bytes.NewReader(part), ContentLength: &n})
		})
		if err != nil {
			return nil, fmt.Errorf("upload part %d: %w", number, classifyAWS(err))
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: &number})
	}
	return parts, in.atEnd()
}

// abort drops a failed multipart upload's parts. It runs even when ctx
// is done (that may be why the upload failed); a failure only leaves
// parts for the bucket's lifecycle rule to clean.
func (s *S3) abort(ctx context.Context, key string, uploadID *string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	_, _ = s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &key, UploadId: uploadID})
}

// withTimeout runs one request under the call timeout.
func withTimeout[T any](ctx context.Context, timeout time.Duration, do func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return do(ctx)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// exactReader reads a value that must be exactly left bytes long.
type exactReader struct {
	r    io.Reader
	left int64
}

// fill reads len(p) bytes of the value.
func (e *exactReader) fill(p []byte) error {
	n, err := io.ReadFull(e.r, p)
	e.left -= int64(n)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return errclass.Mark(ErrRejected, fmt.Errorf("the value ended before its size: %d B missing", e.left))
		}
		return errclass.Mark(ErrRejected, fmt.Errorf("reading the value: %w", err))
	}
	return nil
}

// atEnd checks that the value has no byte beyond its size.
func (e *exactReader) atEnd() error {
	var one [1]byte
	if n, _ := io.ReadFull(e.r, one[:]); n != 0 {
		return errclass.Mark(ErrRejected, errors.New("the value is longer than its size"))
	}
	return nil
}
