// Package procstat reads a process's CPU time and memory from Linux's /proc,
// so the benchmark measures a proxy's cost as the kernel accounts it rather
// than as the proxy reports it.
package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	tickOnce sync.Once
	ticks    int64 = 100
)

// ClockTicks is the kernel's USER_HZ (getconf CLK_TCK), the unit of the CPU
// times in /proc/PID/stat. It falls back to 100, the value on every common
// Linux build, when getconf is missing.
func ClockTicks() int64 {
	tickOnce.Do(func() {
		out, err := exec.Command("getconf", "CLK_TCK").Output()
		if err != nil {
			return
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
			ticks = n
		}
	})
	return ticks
}

// CPU is the user plus system CPU time pid has used so far, from fields 14
// (utime) and 15 (stime) of /proc/PID/stat. It does not include children.
func CPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(data, ClockTicks())
}

func parseStatCPU(data []byte, hz int64) (time.Duration, error) {
	// The command name (field 2) is in parentheses and may itself contain
	// spaces or parentheses: fields are counted from the last ')'.
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, errors.New("procstat: malformed stat line")
	}
	fields := strings.Fields(string(data[end+1:]))
	// fields[0] is field 3 (state), so utime (14) is fields[11].
	if len(fields) < 13 {
		return 0, errors.New("procstat: short stat line")
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	return time.Duration(utime+stime) * time.Second / time.Duration(hz), nil
}

// Memory is what /proc/PID/status says of a process's resident memory, in
// bytes.
type Memory struct {
	RSS  int64 // VmRSS: resident now
	Peak int64 // VmHWM: the high-water mark of RSS
}

// Mem reads VmRSS and VmHWM of pid.
func Mem(pid int) (Memory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, err
	}
	return parseStatus(data)
}

func parseStatus(data []byte) (Memory, error) {
	var m Memory
	var seen int
	for _, line := range strings.Split(string(data), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch key {
		case "VmRSS":
			dst = &m.RSS
		case "VmHWM":
			dst = &m.Peak
		default:
			continue
		}
		f := strings.Fields(val) // "1234 kB"
		if len(f) != 2 || f[1] != "kB" {
			return m, fmt.Errorf("procstat: unexpected %s value %q", key, val)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return m, fmt.Errorf("procstat: %s: %w", key, err)
		}
		*dst = kb << 10
		seen++
	}
	if seen != 2 {
		return m, errors.New("procstat: VmRSS or VmHWM missing")
	}
	return m, nil
}

// ResetPeak sets pid's VmHWM back to its current RSS (writing 5 to
// /proc/PID/clear_refs, Linux 4.0+), so a later Mem().Peak is the peak of
// what happened in between.
func ResetPeak(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}
