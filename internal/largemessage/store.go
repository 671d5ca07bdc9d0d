package largemessage

import (
	"context"
	"io"

	"github.com/kproxy/kproxy/internal/objectstore"
)

// Store is the bucket the values go to: objectstore.S3, whose errors are
// in objectstore's classes (ErrMissing, ErrRetriable, ErrRejected).
type Store interface {
	Bucket() string
	Put(ctx context.Context, key string, value io.Reader, size int64, contentType string) (objectstore.Stored, error)
	Get(ctx context.Context, key string) (io.ReadCloser, int64, error)
	Delete(ctx context.Context, key string) error
}
