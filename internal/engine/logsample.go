package engine

import "time"

// logSampler lets at most one log line through per interval and counts the
// ones it holds back, so that a condition repeating many times a second
// (an unreachable upstream) costs a line per interval, each saying how
// many occurrences it stands for. It is not safe for concurrent use; its
// owner's lock guards it.
type logSampler struct {
	interval   time.Duration
	last       time.Time // when a line was last let through; zero: never
	suppressed int       // occurrences held back since then
}

// allow reports whether an occurrence at now may be logged. When it may,
// it also returns how many occurrences were held back since the last line
// and starts counting afresh; when it may not, the occurrence is counted.
func (l *logSampler) allow(now time.Time) (ok bool, suppressed int) {
	if !l.last.IsZero() && now.Sub(l.last) < l.interval {
		l.suppressed++
		return false, 0
	}
	suppressed, l.suppressed, l.last = l.suppressed, 0, now
	return true, suppressed
}

// take returns the occurrences held back so far and forgets them, for a
// closing line (the condition ended) that reports them.
func (l *logSampler) take() int {
	n := l.suppressed
	*l = logSampler{interval: l.interval}
	return n
}

// durationText renders d for a log field with its unit ("1.5s", "120ms"),
// rounded to the millisecond so that lines stay readable.
func durationText(d time.Duration) string {
	if d > time.Millisecond {
		d = d.Round(time.Millisecond)
	}
	return d.String()
}
