package idp

import (
	"fmt"
	"io"
	"net/http"
)

// tokenQuirks make the token endpoint misbehave as some real (or hostile)
// providers do.
type tokenQuirks struct {
	expiresIn    *int64 // overrides expires_in; nil: the token lifetime
	echoRequests bool   // refuse every request, echoing its form in the body
}

// SetExpiresIn makes the token endpoint answer expires_in seconds (however
// long the token's exp says it lasts): a huge, zero or negative value.
func (p *IdP) SetExpiresIn(seconds int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.quirks.expiresIn = &seconds
}

// EchoTokenRequests makes the token endpoint refuse every request with
// 400 and a text/plain body that repeats the request's Authorization
// header and form, client_secret included, as a broken or hostile
// endpoint might.
func (p *IdP) EchoTokenRequests() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.quirks.echoRequests = true
}

// TokenRequests counts the requests the token endpoint has received,
// whatever it answered.
func (p *IdP) TokenRequests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokenRequests
}

// quirkyToken counts the request and answers it if a quirk says so.
func (p *IdP) quirkyToken(w http.ResponseWriter, r *http.Request) (answered bool) {
	p.mu.Lock()
	p.tokenRequests++
	echo := p.quirks.echoRequests
	p.mu.Unlock()
	if !echo {
		return false
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = fmt.Fprintf(w, "cannot parse request: Authorization: %s\n%s", r.Header.Get("Authorization"), body)
	return true
}

// expiresIn is the expires_in to answer for a token of lifetime seconds.
func (p *IdP) expiresIn(lifetime int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quirks.expiresIn != nil {
		return *p.quirks.expiresIn
	}
	return lifetime
}
