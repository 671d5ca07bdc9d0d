package kms

import (
	"context"
	"fmt"

	"github.com/kproxy/kproxy/internal/errclass"
)

// flight is one KMS call that every goroutine needing its result waits
// for, so a DEK is fetched once and not by each producer at the same time.
type flight struct {
	done chan struct{}
	dek  *DEK  // set before done is closed
	err  error // set before done is closed
}

func newFlight() *flight { return &flight{done: make(chan struct{})} }

// wait returns the flight's result, or a retriable error when ctx ends
// first (the call goes on for the others).
func (f *flight) wait(ctx context.Context) (*DEK, error) {
	select {
	case <-f.done:
		return f.dek, f.err
	case <-ctx.Done():
		return nil, errclass.Mark(ErrRetriable, fmt.Errorf("waiting for the KMS: %w", ctx.Err()))
	}
}
