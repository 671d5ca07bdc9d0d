// Package periodic runs background work at a fixed interval.
package periodic

import (
	"context"
	"time"
)

// Every calls do each interval, the first time one interval after it
// starts, until ctx ends; it returns when ctx ends and never calls do
// after that. A call that outlasts the interval delays the next rather
// than stacking calls up.
func Every(ctx context.Context, interval time.Duration, do func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if ctx.Err() != nil { // both were ready; select picked the tick
				return
			}
			do()
		}
	}
}
