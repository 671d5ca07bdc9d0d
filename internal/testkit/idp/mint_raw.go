package idp

import (
	"fmt"

	"github.com/go-jose/go-jose/v4"
)

// MintRaw signs payload, taken byte for byte as the token's claims, with
// the current key: what the holder of a validly signed token with claims
// of its choosing sends, including what no JSON encoder writes (member
// names differing only in case, duplicate members). It panics only if
// signing itself fails.
func (p *IdP) MintRaw(payload string) string {
	p.mu.Lock()
	key := p.current
	p.mu.Unlock()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key.priv, KeyID: key.kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		panic(fmt.Errorf("idp: signer: %w", err))
	}
	jws, err := signer.Sign([]byte(payload))
	if err != nil {
		panic(fmt.Errorf("idp: sign: %w", err))
	}
	token, err := jws.CompactSerialize()
	if err != nil {
		panic(fmt.Errorf("idp: serialize: %w", err))
	}
	return token
}
