package proxy

import (
	"net/http"
	"strings"
	"time"
)

// The admin endpoint is unauthenticated, so any peer that reaches it must
// not be able to hold its connections (and kproxy's descriptors) without
// bound. These are its deadlines, the same for every path but the opt-in
// profiles.
const (
	// adminHeaderTimeout bounds reading a request's header, and an idle
	// keep-alive connection's wait for the next one: a prober or scraper
	// sends its request at once, and reconnects for the next.
	adminHeaderTimeout = 5 * time.Second
	// adminWriteTimeout bounds writing an answer to a peer that does not
	// read it.
	adminWriteTimeout = 10 * time.Second
)

// pprofPrefix is where admin.pprof serves the profiles; a CPU profile or
// trace takes as long as the operator asks (?seconds=), so its answer has
// no write deadline.
const pprofPrefix = "/debug/pprof/"

// withRequestDeadlines bounds each request to h: its body (which no admin
// path reads, and net/http would otherwise wait for without a deadline
// before answering) must arrive within adminHeaderTimeout, and the answer
// must be written within adminWriteTimeout. A deadline, not the server's
// ReadTimeout, so that the profiles' long answers are not cut.
func withRequestDeadlines(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		now := time.Now()
		if r.ContentLength != 0 { // -1: chunked
			rc.SetReadDeadline(now.Add(adminHeaderTimeout))
		}
		write := now.Add(adminWriteTimeout)
		if strings.HasPrefix(r.URL.Path, pprofPrefix) {
			write = time.Time{} // an earlier request's deadline must not cut it
		}
		rc.SetWriteDeadline(write)
		h.ServeHTTP(w, r)
	})
}
