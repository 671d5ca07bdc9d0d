package e2e

import (
	"fmt"
	"os"
	"runtime/debug"
	"testing"
	"time"
)

// suiteLimit bounds the whole package. The suite takes seconds; a kproxy bug
// that stalls a connection can instead make an idempotent kgo producer wait
// for a response forever (in-flight records are never timed out), and the
// default go test timeout is 10 minutes.
const suiteLimit = 5 * time.Minute

func TestMain(m *testing.M) {
	watchdog := time.AfterFunc(suiteLimit, func() {
		debug.SetTraceback("all")
		panic(fmt.Sprintf("e2e: suite still running after %v: a client is stuck (goroutines below)", suiteLimit))
	})
	code := m.Run()
	watchdog.Stop()
	os.Exit(code)
}
