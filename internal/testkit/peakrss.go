package testkit

import "github.com/kproxy/kproxy/bench/procstat"

// PeakRSS is the kproxy process's peak resident set size so far (VmHWM),
// skipping the test where /proc cannot tell it (or kproxy runs in the
// test's process).
func (b *Binary) PeakRSS() int64 {
	b.t.Helper()
	if b.Cmd == nil {
		b.t.Skip("kproxy runs in the test's process: its peak RSS is not its own")
	}
	m, err := procstat.Mem(b.Cmd.Process.Pid)
	if err != nil {
		b.t.Skipf("no /proc to read kproxy's peak RSS from: %v", err)
	}
	return m.Peak
}
