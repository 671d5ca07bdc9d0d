package main

import (
	"fmt"
	"math"
	"strconv"
)

// defaultMemoryLimitRatio is the share of the container's memory limit
// given to the Go runtime as its soft limit: the rest is headroom for
// what the runtime does not count (stacks, OS buffers) and for a burst
// the collector has not caught up with yet.
const defaultMemoryLimitRatio = 0.9

// memoryLimit is the Go soft memory limit (runtime/debug.SetMemoryLimit)
// from KPROXY_MEMORY_LIMIT, the container's memory limit in bytes (a
// Kubernetes resourceFieldRef on limits.memory), times
// KPROXY_MEMORY_LIMIT_RATIO (default 0.9). ok is false when there is
// nothing to set: KPROXY_MEMORY_LIMIT unset, or GOMEMLIMIT set (the
// runtime has applied it and it wins).
func memoryLimit(getenv func(string) string) (limit int64, ok bool, err error) {
	raw := getenv("KPROXY_MEMORY_LIMIT")
	if raw == "" || getenv("GOMEMLIMIT") != "" {
		return 0, false, nil
	}
	bytes, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || bytes <= 0 {
		return 0, false, fmt.Errorf("KPROXY_MEMORY_LIMIT: %q is not a positive number of bytes", raw)
	}
	ratio := defaultMemoryLimitRatio
	if r := getenv("KPROXY_MEMORY_LIMIT_RATIO"); r != "" {
		ratio, err = strconv.ParseFloat(r, 64)
		if err != nil || ratio <= 0 || ratio > 1 {
			return 0, false, fmt.Errorf("KPROXY_MEMORY_LIMIT_RATIO: %q is not a number in (0, 1]", r)
		}
	}
	return int64(math.Floor(float64(bytes) * ratio)), true, nil
}
