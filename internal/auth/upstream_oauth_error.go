package auth

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/oauth2"
)

// maxTokenErrorText bounds the error and error_description kproxy repeats
// from a token endpoint.
const maxTokenErrorText = 256

// TokenEndpointError is a token endpoint's refusal (RFC 6749 section 5.2)
// as kproxy logs it: the HTTP status, error and error_description only.
// The response body is never kept: an endpoint that echoes its request
// would put the client secret in it.
type TokenEndpointError struct {
	HTTPStatus  int
	Code        string
	Description string
}

func (e *TokenEndpointError) Error() string {
	s := fmt.Sprintf("HTTP status %d", e.HTTPStatus)
	if e.Code != "" {
		s += fmt.Sprintf(", error %q", e.Code)
	}
	if e.Description != "" {
		s += fmt.Sprintf(", error_description %q", e.Description)
	}
	return s
}

// tokenRequestError replaces oauth2's RetrieveError, whose message holds
// the whole response body when it has no error code, with a
// TokenEndpointError; other errors (the transport's, a 2xx body that is
// not a token) are kept.
func (s *TokenSource) tokenRequestError(err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return err
	}
	out := &TokenEndpointError{Code: s.tokenErrorText(re.ErrorCode), Description: s.tokenErrorText(re.ErrorDescription)}
	if re.Response != nil {
		out.HTTPStatus = re.Response.StatusCode
	}
	return out
}

// tokenErrorText is an endpoint's error text fit for the log: the client
// secret (should the endpoint echo it) redacted, control characters
// dropped, at most maxTokenErrorText bytes.
func (s *TokenSource) tokenErrorText(text string) string {
	if secret := s.cfg.ClientSecret; secret != "" {
		text = strings.ReplaceAll(text, secret, "[redacted]")
		text = strings.ReplaceAll(text, url.QueryEscape(secret), "[redacted]")
	}
	text = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, text)
	if len(text) > maxTokenErrorText {
		text = strings.ToValidUTF8(text[:maxTokenErrorText], "") + "..."
	}
	return text
}
