package policy

import (
	"strings"
	"testing"

	"github.com/kproxy/kproxy/policy/policyconfig"
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
		// -1 is "unlimited" for retention, not a small number.
		{"retention.ms <= 604800000", "-1", false},
		{"retention.bytes < 1073741824", "-1", false},
		{"retention.ms >= 86400000", "-1", true},
		{"retention.ms = -1", "-1", true},
		{"retention.ms != -1", " -1 ", false},
		// Any negative retention.bytes is unlimited to the log cleaner.
		{"retention.bytes <= 1073741824", "-5", false},
		{"retention.bytes >= 1073741824", "-5", true},
		{"local.retention.bytes <= 1000", "-1", false},
		{"local.retention.ms <= 1000", "-2", false},
		{"local.retention.ms = -2", "-2", true},
		{"max.message.bytes <= 1000", "-5", false},
		// Trimmed as Java trims (control characters too), signs as Java reads.
		{"retention.ms <= 1000", "\x00\t-1\n", false},
		{"retention.ms <= 1000", " +999 ", true},
		// Syntax Java's parsers read differently from Go's fails closed.
		{"retention.ms <= 604800000", "1e3", true},
		{"retention.ms <= 604800000", "0x10", false},
		{"min.cleanable.dirty.ratio != 0", "0x0p0", false},
		{"min.cleanable.dirty.ratio != 0", "0.0d", false},
		{"retention.ms <= 604800000", "Infinity", false},
		{"retention.ms >= 1", "NaN", false},
		{"retention.ms <= 1000", "1e999", false},
		// Long.parseLong reads Unicode digits (fullwidth -１ is -1).
		{"retention.ms <= 1000", "-１", false},
		// Exact, no float rounding.
		{"retention.bytes <= 9007199254740992", "9007199254740993", false},
		// String != is case-insensitive and sees list elements.
		{"unclean.leader.election.enable != true", "TRUE", false},
		{"cleanup.policy != compact", "delete, compact", false},
		{"cleanup.policy != compact", "delete", true},
		{"cleanup.policy = compact", " compact ", true},
	} {
		r, err := policyconfig.ParseConfigRequirement(tt.req)
		if err != nil {
			t.Fatalf("%q: %v", tt.req, err)
		}
		if got := satisfies(r.Key, unescape(tt.value), r); got != tt.want {
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

func unescape(s string) string {
	return strings.NewReplacer(`\x00`, "\x00", `\t`, "\t", `\n`, "\n").Replace(s)
}
