package testkit

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

const hostsFile = "/etc/hosts"

// AddHosts maps names to 127.0.0.1 in /etc/hosts, for processes whose
// resolver a test cannot replace (kcat, the Java tools), and removes the
// lines again when the test ends. It reports why it cannot ("" when it
// did): not root, or no writable /etc/hosts. Edits hold an flock on the
// file, so tests of several packages (processes) may edit it at once.
func AddHosts(t testing.TB, names ...string) (whyNot string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return fmt.Sprintf("not root: cannot add %s to %s (CI runs as root)", strings.Join(names, " "), hostsFile)
	}
	marker := fmt.Sprintf("# kproxy-test %d %s", os.Getpid(), t.Name())
	line := "127.0.0.1 " + strings.Join(names, " ") + " " + marker + "\n"
	if err := editHosts(func(old string) string {
		if old != "" && !strings.HasSuffix(old, "\n") {
			old += "\n"
		}
		return old + line
	}); err != nil {
		return err.Error()
	}
	t.Cleanup(func() {
		err := editHosts(func(cur string) string {
			var kept []string
			for _, l := range strings.SplitAfter(cur, "\n") {
				if !strings.Contains(l, marker) {
					kept = append(kept, l)
				}
			}
			return strings.Join(kept, "")
		})
		if err != nil {
			t.Errorf("remove the test's lines from %s: %v", hostsFile, err)
		}
	})
	return ""
}

// editHosts rewrites /etc/hosts in place (in a container it is a bind
// mount, which a rename would not replace) under an exclusive flock.
func editHosts(edit func(string) string) error {
	f, err := os.OpenFile(hostsFile, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", hostsFile, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", hostsFile, err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	old, err := os.ReadFile(hostsFile)
	if err != nil {
		return fmt.Errorf("read %s: %w", hostsFile, err)
	}
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("truncate %s: %w", hostsFile, err)
	}
	if _, err := f.WriteAt([]byte(edit(string(old))), 0); err != nil {
		return fmt.Errorf("write %s: %w", hostsFile, err)
	}
	return nil
}
