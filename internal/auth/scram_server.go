package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"hash"
	"strconv"
)

// serverNonceLen is the random part the server adds to the client nonce.
const serverNonceLen = 24

// scramServer is the server side of SCRAM (RFC 5802 section 5):
//
//	client-first  -> server-first (nonce, salt, iterations)
//	client-final  -> server-final (server signature), done
type scramServer struct {
	mechanism string
	h         func() hash.Hash
	store     CredentialStore
	step      int // 0: awaiting client-first, 1: awaiting client-final, 2: ended
	// newNonce makes the server's part of the nonce; tests replace it to
	// replay published exchanges.
	newNonce func() (string, error)

	first       scramClientFirst
	cred        Credential
	known       bool   // cred is the user's own, not a decoy
	nonce       string // client nonce + server nonce
	serverFirst string
	user        string // set on success only
}

func newScramServer(mechanism string, store CredentialStore) *scramServer {
	return &scramServer{mechanism: mechanism, h: scramHash(mechanism), store: store, newNonce: randomNonce}
}

// randomNonce is serverNonceLen bytes from crypto/rand in raw standard
// base64, which is printable and has no ",".
func randomNonce() (string, error) {
	b := make([]byte, serverNonceLen)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawStdEncoding.EncodeToString(b), nil
}

func (s *scramServer) Mechanism() string { return s.mechanism }
func (s *scramServer) User() string      { return s.user }

func (s *scramServer) Step(msg []byte) ([]byte, bool, error) {
	step := s.step
	s.step = 2 // any failure ends the exchange; success sets the next step
	switch step {
	case 0:
		out, err := s.clientFirst(msg)
		if err != nil {
			return nil, false, err
		}
		s.step = 1
		return out, false, nil
	case 1:
		out, err := s.clientFinal(msg)
		if err != nil {
			return nil, false, err
		}
		return out, true, nil
	}
	return nil, false, fmt.Errorf("%s: %w: the exchange has ended", s.mechanism, ErrIllegalState)
}

func (s *scramServer) clientFirst(msg []byte) ([]byte, error) {
	cf, err := parseScramClientFirst(msg)
	if err != nil {
		// cf.User may be set when a later attribute is wrong; naming
		// the user helps an operator and is no secret.
		return nil, failed(s.mechanism, cf.User, fmt.Sprintf("client-first message: %v", err))
	}
	// Kafka only lets a client act for itself.
	if cf.AuthzID != "" && cf.AuthzID != cf.User {
		return nil, failed(s.mechanism, cf.User, "authorization id differs from the user")
	}
	if cf.Extensions["tokenauth"] == "true" {
		return nil, failed(s.mechanism, cf.User, "delegation tokens (tokenauth) are not supported")
	}
	s.first = cf
	s.cred, s.known = s.store.Lookup(cf.User, s.mechanism)

	sn, err := s.newNonce()
	if err != nil {
		return nil, fmt.Errorf("%s: server nonce: %w", s.mechanism, err)
	}
	s.nonce = cf.Nonce + sn
	s.serverFirst = "r=" + s.nonce + ",s=" + base64.StdEncoding.EncodeToString(s.cred.Salt) + ",i=" + strconv.Itoa(s.cred.Iterations)
	return []byte(s.serverFirst), nil
}

func (s *scramServer) clientFinal(msg []byte) ([]byte, error) {
	user := s.first.User
	cf, err := parseScramClientFinal(msg)
	if err != nil {
		return nil, failed(s.mechanism, user, fmt.Sprintf("client-final message: %v", err))
	}
	// Binding and nonce are public values, so plain comparisons do; only
	// the proof needs constant time. A mismatched nonce is also what
	// defeats a proof replayed from another exchange.
	if string(cf.ChannelBinding) != s.first.GS2Header {
		return nil, failed(s.mechanism, user, "channel binding (c=) does not repeat the gs2 header")
	}
	// librdkafka before 2.6.1 (confluentinc/librdkafka#4895), which is
	// what most distributions ship kcat and the librdkafka-based clients
	// with, echoes its own nonce once more in front of the server's. Kafka
	// 3.8.1-3.9 accepts that (its CVE-2024-56128 fix checks endsWith);
	// kproxy accepts exactly that one extra form, which still carries the
	// server's fresh nonce, so a proof from another exchange cannot be
	// replayed (the proof also covers the AuthMessage, which holds it).
	if cf.Nonce != s.nonce && cf.Nonce != s.first.Nonce+s.nonce {
		return nil, failed(s.mechanism, user, "nonce (r=) does not match the server's")
	}
	if len(cf.Proof) != s.h().Size() {
		return nil, failed(s.mechanism, user, "client proof has the wrong length")
	}

	authMessage := []byte(s.first.Bare + "," + s.serverFirst + "," + cf.WithoutProof)
	// ClientKey = ClientProof XOR HMAC(StoredKey, AuthMessage); the client
	// knows the password iff H(ClientKey) == StoredKey.
	key := hmacSum(s.h, s.cred.StoredKey, authMessage)
	subtle.XORBytes(key, key, cf.Proof)
	proofOK := subtle.ConstantTimeCompare(storedKey(s.h, key), s.cred.StoredKey) == 1

	switch {
	case !s.known:
		return nil, failed(s.mechanism, user, "unknown user or no "+s.mechanism+" credential")
	case !proofOK:
		return nil, failed(s.mechanism, user, "wrong password (client proof does not verify)")
	}
	s.user = user
	sig := hmacSum(s.h, s.cred.ServerKey, authMessage)
	return []byte("v=" + base64.StdEncoding.EncodeToString(sig)), nil
}
