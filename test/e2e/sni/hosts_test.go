package e2esni

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

const hostsFile = "/etc/hosts"

// hostsMu serialises this package's edits of /etc/hosts.
var hostsMu sync.Mutex

// addHosts maps names to 127.0.0.1 in /etc/hosts, for processes such as
// kcat whose resolver the test cannot replace, and removes the lines when
// the test ends. Not root (or no writable /etc/hosts): the test is skipped
// with why.
func addHosts(t *testing.T, names ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("not root: cannot add %s to %s for kcat (CI runs as root); skipping", strings.Join(names, " "), hostsFile)
	}
	marker := fmt.Sprintf("# kproxy-e2esni %d %s", os.Getpid(), t.Name())
	line := "127.0.0.1 " + strings.Join(names, " ") + " " + marker + "\n"
	hostsMu.Lock()
	defer hostsMu.Unlock()
	old, err := os.ReadFile(hostsFile)
	if err != nil {
		t.Skipf("cannot read %s: %v; skipping", hostsFile, err)
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		old = append(old, '\n')
	}
	// Written in place: in a container /etc/hosts is a bind mount, which
	// a rename would not replace.
	if err := os.WriteFile(hostsFile, append(old, line...), 0o644); err != nil {
		t.Skipf("cannot write %s: %v; skipping", hostsFile, err)
	}
	t.Cleanup(func() {
		hostsMu.Lock()
		defer hostsMu.Unlock()
		cur, err := os.ReadFile(hostsFile)
		if err != nil {
			t.Errorf("restore %s: %v", hostsFile, err)
			return
		}
		var kept []string
		for _, l := range strings.SplitAfter(string(cur), "\n") {
			if !strings.Contains(l, marker) {
				kept = append(kept, l)
			}
		}
		if err := os.WriteFile(hostsFile, []byte(strings.Join(kept, "")), 0o644); err != nil {
			t.Errorf("restore %s: %v", hostsFile, err)
		}
	})
}
