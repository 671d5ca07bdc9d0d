package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kproxy/kproxy/bench/procstat"
)

// holdIdle leaves every started target without traffic for o.Idle and
// records the CPU each process used meanwhile (timers, metadata refresh,
// the Go runtime's background work): what a proxy costs when nobody uses
// it, the floor of a sidecar's CPU request. Without -idle only the RSS
// after start-up is recorded.
func (r *runner) holdIdle(ctx context.Context) error {
	if r.o.Idle <= 0 {
		return nil
	}
	start := make([]time.Duration, len(r.targets))
	for i, t := range r.targets {
		if pid := t.pid(); pid != 0 {
			c, err := procstat.CPU(pid)
			if err != nil {
				return fmt.Errorf("idle CPU of %s: %w", t.name, err)
			}
			start[i] = c
		}
	}
	began := time.Now()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(r.o.Idle):
	}
	window := time.Since(began).Seconds()
	for i, t := range r.targets {
		pid := t.pid()
		if pid == 0 {
			continue
		}
		c, err := procstat.CPU(pid)
		if err != nil {
			return fmt.Errorf("idle CPU of %s: %w", t.name, err)
		}
		mc := (c - start[i]).Seconds() / window * 1000
		t.idleMillicores = &mc
		t.idleSeconds = window
		fmt.Fprintf(r.log, "idle %-14s %.1f millicores over %.0f s\n", t.name, mc, window)
	}
	return nil
}

// idleCPU is a target's idle CPU for the Markdown, "—" when not measured.
func idleCPU(t TargetInfo) string {
	if t.IdleMillicores == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f m", *t.IdleMillicores)
}

// idleNote says how coarse the idle CPU figures are: /proc counts CPU in
// clock ticks, so one tick over the window is the resolution.
func (r *Report) idleNote(b *strings.Builder) {
	for _, t := range r.Targets {
		if t.IdleMillicores != nil && r.Meta.ClockTicks > 0 {
			fmt.Fprintf(b, "Idle CPU: millicores over %.0f s without traffic after start-up (-idle); one clock tick over that window is %.2f m.\n\n",
				t.IdleSeconds, 1000/float64(r.Meta.ClockTicks)/t.IdleSeconds)
			return
		}
	}
}
