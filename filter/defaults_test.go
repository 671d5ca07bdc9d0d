package filter_test

import (
	"testing"

	"github.com/kproxy/kproxy/filter"
)

// limits is a section with a default: max_bytes left out is 1024.
type limits struct {
	MaxBytes int `yaml:"max_bytes"`
}

func (l *limits) SetDefaults() {
	if l.MaxBytes == 0 {
		l.MaxBytes = 1024
	}
}

// The check judges the section with its defaults filled, and the section
// keeps them for New.
func TestSetDefaultsThenFillsBeforeChecking(t *testing.T) {
	var seen int
	validate := filter.SetDefaultsThen(func(l *limits, problems *filter.Problems) {
		seen = l.MaxBytes
		if l.MaxBytes < 0 {
			problems.Add("max_bytes", "%d: at least 1", l.MaxBytes)
		}
	})
	cfg := &limits{}
	var problems filter.Problems
	validate(cfg, &problems)
	if seen != 1024 || cfg.MaxBytes != 1024 || len(problems.List()) != 0 {
		t.Fatalf("check saw %d, section kept %d, problems %v; want 1024, 1024, none", seen, cfg.MaxBytes, problems.List())
	}
	validate(&limits{MaxBytes: -1}, &problems)
	if got := problems.List(); len(got) != 1 || got[0].Key != "max_bytes" {
		t.Fatalf("problems %v, want one under max_bytes", got)
	}
}
