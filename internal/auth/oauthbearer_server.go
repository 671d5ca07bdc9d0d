package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// TokenValidator checks a bearer token (JWTValidator is kproxy's). An
// invalid token is a *TokenError; any other error (a key source that
// cannot be reached) is reported to the client as invalid_token too.
type TokenValidator interface {
	Validate(ctx context.Context, token string) (ValidatedToken, error)
}

// oauthServer is the server side of OAUTHBEARER (RFC 7628 section 3.2,
// KIP-255): the client-first message carries the token; a valid one ends
// the exchange at once, an invalid one is answered with the JSON error
// challenge, to which the client must reply with a lone %x01, and the
// exchange then fails (SASL_AUTHENTICATION_FAILED).
type oauthServer struct {
	validator TokenValidator
	state     int // 0: awaiting the client-first message; 1: awaiting %x01 after the challenge; 2: ended
	// failure is why the token was refused, reported after the %x01.
	failure error
	token   ValidatedToken
}

// oauthValidationTimeout is a backstop for one token's validation; the key
// set bounds its refreshes with jwks_timeout, which is shorter.
const oauthValidationTimeout = 30 * time.Second

func (s *oauthServer) Mechanism() string { return OAuthBearer }

func (s *oauthServer) User() string {
	if s.state != 2 || s.failure != nil {
		return ""
	}
	return s.token.Principal
}

// Expiry is the token's exp once authenticated: the session may not
// outlive it.
func (s *oauthServer) Expiry() time.Time { return s.token.Expiry }

// Claims are the token's claims once authenticated.
func (s *oauthServer) Claims() map[string][]string { return s.token.Claims }

func (s *oauthServer) Step(msg []byte) ([]byte, bool, error) {
	switch s.state {
	case 0:
		return s.clientFirst(msg)
	case 1:
		s.state = 2
		if len(msg) != 1 || msg[0] != 0x01 {
			return nil, false, failed(OAuthBearer, "", "the client answered the error challenge with something other than %x01")
		}
		return nil, false, s.failure
	}
	return nil, false, fmt.Errorf("OAUTHBEARER: %w: the exchange has ended", ErrIllegalState)
}

func (s *oauthServer) clientFirst(msg []byte) ([]byte, bool, error) {
	cf, err := parseOAuthClientFirst(msg)
	if err != nil {
		s.state = 2
		return nil, false, failed(OAuthBearer, "", err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), oauthValidationTimeout)
	defer cancel()
	tok, err := s.validator.Validate(ctx, cf.Token)
	if err == nil && cf.AuthzID != "" && cf.AuthzID != tok.Principal {
		// Kafka's OAuthBearerSaslServer: a client may only act for itself.
		err = &TokenError{Status: "invalid_token", Reason: fmt.Sprintf("authorization id %q differs from the token's principal %q", clip(cf.AuthzID), tok.Principal)}
	}
	if err != nil {
		s.state, s.failure = 1, failed(OAuthBearer, "", "invalid token: "+err.Error())
		return errorChallenge(err), false, nil
	}
	s.state, s.token = 2, tok
	return []byte{}, true, nil
}

// errorChallenge is the server's error message of RFC 7628 section 3.2.2
// as Kafka sends it: {"status":"invalid_token"}, with the scope for
// insufficient_scope.
func errorChallenge(err error) []byte {
	msg := struct {
		Status string `json:"status"`
		Scope  string `json:"scope,omitempty"`
	}{Status: "invalid_token"}
	var te *TokenError
	if errors.As(err, &te) && te.Status != "" {
		msg.Status, msg.Scope = te.Status, te.Scope
	}
	b, _ := json.Marshal(msg)
	return b
}
