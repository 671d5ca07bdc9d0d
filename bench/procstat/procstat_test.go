package procstat

import (
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with spaces and parentheses, utime 250, stime 50.
	line := "1234 (my (odd) proc) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 100 1000000 500 18446744073709551615\n"
	got, err := parseStatCPU([]byte(line), 100)
	if err != nil {
		t.Fatal(err)
	}
	if got != 3*time.Second {
		t.Errorf("CPU = %v, want 3s", got)
	}
	if _, err := parseStatCPU([]byte("1234 (x) S 1 2"), 100); err == nil {
		t.Error("short line accepted")
	}
}

func TestParseStatus(t *testing.T) {
	m, err := parseStatus([]byte("Name:\tx\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\nThreads:\t5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS != 1<<20 || m.Peak != 2<<20 {
		t.Errorf("got %+v", m)
	}
	if _, err := parseStatus([]byte("VmRSS:\t1 kB\n")); err == nil {
		t.Error("missing VmHWM accepted")
	}
}

func TestSelf(t *testing.T) {
	pid := os.Getpid()
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	cpu, err := CPU(pid)
	if err != nil || cpu < 0 {
		t.Fatalf("CPU = %v, %v", cpu, err)
	}
	m, err := Mem(pid)
	if err != nil || m.RSS <= 0 || m.Peak < m.RSS {
		t.Fatalf("Mem = %+v, %v", m, err)
	}
	if err := ResetPeak(pid); err != nil {
		t.Logf("ResetPeak unavailable here: %v", err)
	}
}
