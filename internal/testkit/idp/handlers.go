package idp

import (
	"encoding/json"
	"net/http"
	"time"
)

func (p *IdP) serveDiscovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                p.issuer,
		"token_endpoint":                        p.TokenURL(),
		"jwks_uri":                              p.JWKSURL(),
		"grant_types_supported":                 []string{"client_credentials"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"response_types_supported":              []string{"token"},
		"subject_types_supported":               []string{"public"},
	})
}

func (p *IdP) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, p.publishedKeys())
}

// serveToken implements the client-credentials grant (RFC 6749 section 4.4)
// with client_secret_basic or client_secret_post authentication.
func (p *IdP) serveToken(w http.ResponseWriter, r *http.Request) {
	if p.quirkyToken(w, r) {
		return
	}
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", "malformed form body")
		return
	}
	if grant := r.PostForm.Get("grant_type"); grant != "client_credentials" {
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", "only client_credentials is supported, got "+grant)
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	client, ok := p.opts.Clients[id]
	if !ok || id == "" || client.Secret != secret {
		w.Header().Set("WWW-Authenticate", `Basic realm="idp"`)
		tokenError(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return
	}
	claims := p.defaultClaims(time.Now())
	subject := client.Subject
	if subject == "" {
		subject = id
	}
	claims["sub"] = subject
	claims["client_id"] = id
	scope := r.PostForm.Get("scope")
	if scope != "" {
		claims["scope"] = scope
	}
	for k, v := range client.Claims {
		claims[k] = v
	}
	token, err := p.sign(claims, mintSettings{})
	if err != nil {
		tokenError(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	p.mu.Lock()
	p.tokensIssued++
	p.mu.Unlock()
	resp := map[string]any{
		"access_token": token,
		"token_type":   "Bearer",
		"expires_in":   p.expiresIn(int64(p.opts.TokenLifetime / time.Second)),
	}
	if scope != "" {
		resp["scope"] = scope
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, resp)
}

func tokenError(w http.ResponseWriter, status int, code, description string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": description})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
