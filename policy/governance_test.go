package policy

import (
	"testing"

	"github.com/kproxy/kproxy/config"
)

func TestSatisfies(t *testing.T) {
	for _, tt := range []struct {
		req   string
		value string
		want  bool
	}{
		{"min.insync.replicas >= 2", "2", true},
		{"min.insync.replicas >= 2", "1", false},
		{"min.insync.replicas>=2", "3", true},
		{"retention.ms < 1000", "999", true},
		{"retention.ms < 1000", "1000", false},
		{"retention.ms <= 1000", "1000", true},
		{"segment.bytes > 10", "10", false},
		{"cleanup.policy = compact", "compact", true},
		{"cleanup.policy = compact", "delete", false},
		{"cleanup.policy != compact", "delete", true},
		{"compression.type = 2", "2.0", true},
		{"retention.ms >= 5", "not-a-number", false},
	} {
		r, err := config.ParseConfigRequirement(tt.req)
		if err != nil {
			t.Fatalf("%q: %v", tt.req, err)
		}
		if got := satisfies(tt.value, r); got != tt.want {
			t.Errorf("%q with %q = %v, want %v", tt.req, tt.value, got, tt.want)
		}
	}
}

func TestAcksSatisfy(t *testing.T) {
	for _, tt := range []struct {
		acks, min int16
		want      bool
	}{{-1, -1, true}, {1, -1, false}, {0, -1, false}, {1, 1, true}, {-1, 1, true}, {0, 1, false}, {0, 0, true}} {
		if got := acksSatisfy(tt.acks, tt.min); got != tt.want {
			t.Errorf("acks %d, required %d: %v", tt.acks, tt.min, got)
		}
	}
}
