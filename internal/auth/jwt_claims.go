package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// jwtClaims is a JWT payload read once, by exact member name: RFC 7519
// section 4 makes claim names case-sensitive, and encoding/json decoding
// into a struct folds case and keeps the last of duplicate members, so a
// signed token with an expired "exp" and a later "Exp" would pass as
// unexpired. Every claim kproxy reads (the registered ones, scope/scp, the
// principal claim and the claims policies match on) comes from this one
// view. Values are those of encoding/json's any, with json.Number for
// numbers.
type jwtClaims map[string]any

// maxClaimsDepth bounds the nesting of a payload: access tokens nest an
// object or two (Keycloak's realm_access.roles); deeper is refused rather
// than walked.
const maxClaimsDepth = 32

// errClaims is the cause of every payload that is not a JSON object with
// unique member names at every level.
var errClaims = errors.New("malformed JWT claims")

// parseJWTClaims reads payload as one JSON object, refusing a member name
// given twice in any object (as Kafka's jose4j does), nesting deeper than
// maxClaimsDepth and anything after the object.
func parseJWTClaims(payload []byte) (jwtClaims, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errClaims, err)
	}
	if tok != json.Delim('{') {
		return nil, fmt.Errorf("%w: the payload is not a JSON object", errClaims)
	}
	obj, err := decodeClaimsObject(dec, 1)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the JSON object", errClaims)
	}
	return obj, nil
}

// decodeClaimsObject reads the members of an object whose '{' dec has
// read.
func decodeClaimsObject(dec *json.Decoder, depth int) (map[string]any, error) {
	out := map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errClaims, err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("%w: a member name is not a string", errClaims)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%w: member %q given twice", errClaims, clip(name))
		}
		v, err := decodeClaimsValue(dec, depth)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, fmt.Errorf("%w: %v", errClaims, err)
	}
	return out, nil
}

func decodeClaimsValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errClaims, err)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	if depth >= maxClaimsDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", errClaims, maxClaimsDepth)
	}
	if delim == '{' {
		return decodeClaimsObject(dec, depth+1)
	}
	// '[': the decoder never returns a closing delimiter here.
	var arr []any
	for dec.More() {
		v, err := decodeClaimsValue(dec, depth+1)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return nil, fmt.Errorf("%w: %v", errClaims, err)
	}
	return arr, nil
}

// errClaimType is a claim kproxy reads whose value has the wrong type.
var errClaimType = errors.New("a registered claim has the wrong type")

// maxJWTExp is the latest NumericDate kproxy reads: beyond year 9999 is no
// time anyone meant (and would overflow a time.Duration).
const maxJWTExp = 253402300799 // 9999-12-31T23:59:59Z

// numericDate reads claim name as an RFC 7519 NumericDate (seconds since
// the epoch, fractions allowed); ok is false when it is absent.
func (c jwtClaims) numericDate(name string) (t time.Time, ok bool, err error) {
	v, present := c[name]
	if !present {
		return time.Time{}, false, nil
	}
	n, isNumber := v.(json.Number)
	if !isNumber {
		return time.Time{}, false, fmt.Errorf("%w: %s is not a number", errClaimType, name)
	}
	f, err := n.Float64()
	if err != nil || math.Abs(f) > maxJWTExp {
		return time.Time{}, false, fmt.Errorf("%w: %s is not a date before year 10000", errClaimType, name)
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true, nil
}

// str reads claim name as a string; ok is false when it is absent.
func (c jwtClaims) str(name string) (s string, ok bool, err error) {
	v, present := c[name]
	if !present {
		return "", false, nil
	}
	s, isString := v.(string)
	if !isString {
		return "", false, fmt.Errorf("%w: %s is not a string", errClaimType, name)
	}
	return s, true, nil
}

// audience reads aud: a string or an array of strings (RFC 7519 section
// 4.1.3).
func (c jwtClaims) audience() ([]string, error) {
	switch v := c["aud"].(type) {
	case nil:
		if _, present := c["aud"]; present {
			return nil, fmt.Errorf("%w: aud is null", errClaimType)
		}
		return nil, nil
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%w: aud has an element that is not a string", errClaimType)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: aud is neither a string nor an array of strings", errClaimType)
}
