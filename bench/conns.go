package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/bench/procstat"
)

// ConnsResult is the idle-connection-scale measurement.
type ConnsResult struct {
	Requested int                 `json:"requested"`
	Results   []ConnsTargetResult `json:"results"`
}

// ConnsTargetResult is one proxy holding Opened idle pairs.
type ConnsTargetResult struct {
	Target       string  `json:"target"`
	Opened       int     `json:"opened"`
	RSSBefore    int64   `json:"rss_before_bytes"`
	RSSAfter     int64   `json:"rss_after_bytes"`
	PerPairBytes float64 `json:"rss_per_pair_bytes"`
	Error        string  `json:"error,omitempty"`
}

// connsTargets are the proxies measured (those of the run); direct has no
// process. kproxy-policy is there because a gateway enforcing a policy
// keeps each connection's principal and decisions.
var connsTargets = []string{TargetSplice, TargetCopy, TargetKproxy, TargetKproxyPolicy}

// fdsPerPair is how many file descriptors a proxy holds per idle pair: the
// two sockets, and for the splice relay also one pipe (two descriptors) per
// direction, which Go's splice(2) path keeps while it waits for data.
func fdsPerPair(target string) int {
	if target == TargetSplice {
		return 6
	}
	return 2
}

// fdReserve is what a process needs besides its pairs: listeners, the
// runtime, logs.
const fdReserve = 256

// runConns starts a stand-in upstream process and a fresh process of each
// proxy, opens o.Conns connections through the proxy (each sends one
// ApiVersions request and reads the answer, so the proxy has dialled its
// upstream connection), and reads the proxy's RSS before and after. A
// proxy whose file descriptor limit cannot hold o.Conns pairs gets as many
// as fit, with a note.
func (r *runner) runConns(ctx context.Context) error {
	cr := &ConnsResult{Requested: r.o.Conns}
	r.report.Conns = cr
	be, beProc, err := startBackend(&r.o, r.workDir)
	if err != nil {
		return err
	}
	defer beProc.stop()
	saved := r.up
	r.up = be
	defer func() { r.up = saved }()
	limit := fileLimit()
	for _, name := range connsTargets {
		if !slices.Contains(r.o.Targets, name) {
			continue
		}
		n := min(r.o.Conns, (int(limit)-fdReserve)/fdsPerPair(name))
		if n < r.o.Conns {
			r.report.Notes = append(r.report.Notes, fmt.Sprintf(
				"connection scale: %s holds %d file descriptors per idle pair, so RLIMIT_NOFILE %d (the hard limit here) fits %d of the %d pairs asked for; RSS per pair is measured over those",
				name, fdsPerPair(name), limit, n, r.o.Conns))
		}
		t, err := r.startTarget(ctx, name)
		if err != nil {
			return err
		}
		res := ConnsTargetResult{Target: name}
		if t.skipped != "" {
			res.Error = t.skipped
		} else if err := r.holdConns(ctx, t, n, &res); err != nil {
			res.Error = err.Error()
		}
		t.stop()
		if res.Error != "" {
			fmt.Fprintf(r.log, "conns %-8s ERROR %s\n", name, res.Error)
		} else {
			fmt.Fprintf(r.log, "conns %-8s %d pairs: RSS %s -> %s, %.1f KiB per pair\n", name, res.Opened, mib(res.RSSBefore), mib(res.RSSAfter), res.PerPairBytes/1024)
		}
		cr.Results = append(cr.Results, res)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

func (r *runner) holdConns(ctx context.Context, t *target, n int, res *ConnsTargetResult) error {
	pid := t.pid()
	addr := t.seeds[0]
	if to, ok := t.addrMap[addr]; ok {
		addr = to
	}
	time.Sleep(300 * time.Millisecond)
	before, err := procstat.Mem(pid)
	if err != nil {
		return err
	}
	res.RSSBefore = before.RSS

	conns := make([]net.Conn, n)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	var (
		mu       sync.Mutex
		firstErr error
		next     int
		wg       sync.WaitGroup
	)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := firstErr != nil || i >= n || ctx.Err() != nil
				mu.Unlock()
				if stop {
					return
				}
				c, err := apiVersionsConn(ctx, addr, int32(i))
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("connection %d: %w", i, err)
				}
				conns[i] = c
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, c := range conns {
		if c != nil {
			res.Opened++
		}
	}
	if firstErr != nil {
		return firstErr
	}
	// Give the proxy a moment to finish whatever follows the response.
	time.Sleep(time.Second)
	after, err := procstat.Mem(pid)
	if err != nil {
		return err
	}
	res.RSSAfter = after.RSS
	res.PerPairBytes = float64(after.RSS-before.RSS) / float64(res.Opened)
	return nil
}

// apiVersionsConn dials addr, sends ApiVersions v0 and reads the response.
func apiVersionsConn(ctx context.Context, addr string, corr int32) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kproxy-bench")).AppendRequest(nil, req, corr)
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(frame); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(c, 512)
	var head [8]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		c.Close()
		return nil, fmt.Errorf("read ApiVersions response: %w", err)
	}
	if got := int32(binary.BigEndian.Uint32(head[4:])); got != corr {
		c.Close()
		return nil, fmt.Errorf("ApiVersions response correlation id %d, want %d", got, corr)
	}
	if _, err := br.Discard(int(binary.BigEndian.Uint32(head[:4])) - 4); err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// raiseFileLimit raises RLIMIT_NOFILE, which the proxies inherit, towards
// what conns pairs need: the soft limit to the hard one, and the hard one
// too where we may (CAP_SYS_RESOURCE, up to fs.nr_open). It returns a note
// when the limit stays below what conns pairs need.
func raiseFileLimit(conns int) (string, error) {
	want := uint64(6*conns + fdReserve)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return "", err
	}
	if lim.Cur >= want {
		return "", nil
	}
	if lim.Max < want {
		nrOpen := want
		if data, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
			if v, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64); err == nil {
				nrOpen = v
			}
		}
		try := syscall.Rlimit{Cur: min(want, nrOpen), Max: min(want, nrOpen)}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &try); err == nil {
			return "", nil
		}
	}
	lim.Cur = min(want, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return "", fmt.Errorf("raise RLIMIT_NOFILE: %w", err)
	}
	if lim.Cur < want {
		return fmt.Sprintf("RLIMIT_NOFILE is %d here and the hard limit could not be raised (no CAP_SYS_RESOURCE); kproxy and the relays inherit it", lim.Cur), nil
	}
	return "", nil
}

// fileLimit is the current soft RLIMIT_NOFILE.
func fileLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 1024
	}
	return lim.Cur
}
