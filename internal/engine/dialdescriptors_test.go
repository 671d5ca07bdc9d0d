package engine

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// dialChildEnv marks the process TestDialWaitsForDescriptors runs in,
// which lowers its own open-files limit.
const dialChildEnv = "KPROXY_TEST_DIAL_DESCRIPTORS_CHILD"

// A dial made while kproxy has no descriptor left waits for one instead
// of failing: a client accepted the moment a descriptor came free would
// otherwise be closed unanswered when its upstream dial needs the next.
// The test runs in a child process, whose open-files limit it lowers
// and exhausts.
func TestDialWaitsForDescriptors(t *testing.T) {
	if os.Getenv(dialChildEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDialWaitsForDescriptors$", "-test.v")
		cmd.Env = append(os.Environ(), dialChildEnv+"=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = 64
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	var held []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if errors.Is(err, syscall.EMFILE) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, f)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); !localExhaustion(err) {
		t.Fatalf("a plain dial with no descriptor left: %v, want EMFILE", err)
	}
	const freedAfter = 200 * time.Millisecond
	freed, held := held[:4], held[4:]
	go func() {
		time.Sleep(freedAfter)
		for _, f := range freed {
			f.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	conn, err := dialWaitingForDescriptors(ctx, ln.Addr().String())
	if err != nil {
		t.Fatalf("dial once descriptors were free again: %v", err)
	}
	conn.Close()
	if waited := time.Since(start); waited < freedAfter/2 {
		t.Errorf("the dial succeeded after %s, before any descriptor was free", waited)
	}

	// Until ctx ends, and no longer.
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		held = append(held, f)
	}
	start = time.Now()
	short, cancelShort := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelShort()
	_, err = dialWaitingForDescriptors(short, ln.Addr().String())
	if took := time.Since(start); err == nil || took < 100*time.Millisecond || took > 5*time.Second {
		t.Errorf("a dial with no descriptor freed before its 100ms deadline: %v after %s, want an error once the deadline passed", err, took)
	}
	// An unreachable os.File's finalizer would close its descriptor.
	runtime.KeepAlive(held)
}
