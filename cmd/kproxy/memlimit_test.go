package main

import (
	"strings"
	"testing"
)

// TestMemoryLimit: the soft limit is 90% of KPROXY_MEMORY_LIMIT (or its
// ratio), nothing without it or with GOMEMLIMIT set, and a bad value is
// an error naming the variable.
func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		limit   int64
		ok      bool
		badName string
	}{
		{"unset", nil, 0, false, ""},
		{"512Mi", map[string]string{"KPROXY_MEMORY_LIMIT": "536870912"}, 483183820, true, ""},
		{"ratio", map[string]string{"KPROXY_MEMORY_LIMIT": "1000", "KPROXY_MEMORY_LIMIT_RATIO": "0.75"}, 750, true, ""},
		{"GOMEMLIMIT wins", map[string]string{"KPROXY_MEMORY_LIMIT": "1000", "GOMEMLIMIT": "800MiB"}, 0, false, ""},
		{"not a number", map[string]string{"KPROXY_MEMORY_LIMIT": "512Mi"}, 0, false, "KPROXY_MEMORY_LIMIT:"},
		{"ratio above 1", map[string]string{"KPROXY_MEMORY_LIMIT": "1000", "KPROXY_MEMORY_LIMIT_RATIO": "1.5"}, 0, false, "KPROXY_MEMORY_LIMIT_RATIO"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit, ok, err := memoryLimit(func(k string) string { return tc.env[k] })
			if tc.badName != "" {
				if err == nil || !strings.Contains(err.Error(), tc.badName) {
					t.Fatalf("error %v, want one naming %s", err, tc.badName)
				}
				return
			}
			if err != nil || ok != tc.ok || limit != tc.limit {
				t.Errorf("limit %d ok %v err %v, want %d %v", limit, ok, err, tc.limit, tc.ok)
			}
		})
	}
}
