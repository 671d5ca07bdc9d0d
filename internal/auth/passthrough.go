package auth

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// UserFromClientMessage reads, from a client's first SASL message, the user
// an Apache Kafka broker will authenticate it as, without verifying
// anything: in passthrough mode the broker verifies, and kproxy needs the
// broker's principal for policy and logs. It reads the message with the
// broker's own grammar (PlainSaslServer, ScramMessages.ClientFirstMessage
// and ScramSaslServer), not with the stricter one kproxy's own servers
// use, so that no message the broker accepts leaves kproxy with another
// name or none.
//
// An error means kproxy cannot know the broker's principal and the proxy
// must refuse the connection (fail closed): the message is outside the
// broker's grammar or asks for an authorization id other than the user
// (the broker refuses those too), it authenticates a delegation token
// (tokenauth, whose principal is the token's owner, which only the broker
// knows), or the mechanism is not PLAIN or SCRAM. Errors wrap
// ErrUnmappablePrincipal and never repeat the message, which for PLAIN
// holds the password.
//
// The name is a claim until the upstream accepts the exchange: use it for
// decisions only after the upstream's SaslAuthenticate succeeds.
func UserFromClientMessage(mechanism string, firstClientMsg []byte) (string, error) {
	return (*Mechanisms)(nil).UserFromClientMessage(mechanism, firstClientMsg)
}

// brokerPlainUserOf is PLAIN's passthrough reading, with the errors
// UserFromClientMessage documents.
func brokerPlainUserOf(msg []byte) (string, error) {
	user, err := brokerPlainUser(msg)
	if err != nil {
		return "", fmt.Errorf("user from PLAIN message: %w: %s", ErrUnmappablePrincipal, err)
	}
	return user, nil
}

// brokerScramUserOf is the passthrough reading of the SCRAM mechanism
// named mechanism, with the errors UserFromClientMessage documents.
func brokerScramUserOf(mechanism string) func([]byte) (string, error) {
	return func(msg []byte) (string, error) {
		user, err := brokerScramUser(msg)
		if err != nil {
			return "", fmt.Errorf("user from %s client-first message: %w: %s", mechanism, ErrUnmappablePrincipal, err)
		}
		return user, nil
	}
}

// brokerPlainUser is PlainSaslServer.evaluateResponse's reading: exactly
// three NUL-separated fields, any length, user and password non-empty, an
// authorization id empty or equal to the user. The broker decodes the bytes
// as UTF-8 with replacement characters; kproxy refuses what is not UTF-8
// rather than guess the broker's replacement.
func brokerPlainUser(msg []byte) (string, error) {
	if !utf8.Valid(msg) {
		return "", errors.New("message is not UTF-8")
	}
	fields := strings.Split(string(msg), "\x00")
	switch {
	case len(fields) != 3:
		return "", fmt.Errorf("want 3 NUL-separated fields, got %d", len(fields))
	case fields[1] == "":
		return "", errors.New("empty user")
	case fields[2] == "":
		return "", errors.New("empty password")
	case fields[0] != "" && fields[0] != fields[1]:
		return "", errors.New("authorization id differs from the user (the broker refuses it)")
	}
	return fields[1], nil
}

// kafkaClientFirst is ScramMessages.ClientFirstMessage's pattern, with its
// Java class intersections written out: SASLNAME is
// (?:[\x01-\x7F&&[^=,]]|=2C|=3D)+, VALUE [\x01-\x7F&&[^,]]+, PRINTABLE
// [\x21-\x7E&&[^,]]+, RESERVED (m=VALUE,)? and EXTENSIONS (,[A-Za-z]+=VALUE)*.
// Java's matches() anchors at both ends. Go's regexp reads invalid UTF-8 as
// U+FFFD, as Java's decoder does, which no class here admits.
var kafkaClientFirst = regexp.MustCompile(
	`^n,(?:a=(` + kafkaSASLName + `))?,(?:m=` + kafkaValue + `,)?n=(` + kafkaSASLName + `),r=` + kafkaPrintable +
		`((?:,[A-Za-z]+=` + kafkaValue + `)*)$`)

const (
	kafkaSASLName  = `(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+`
	kafkaValue     = `[\x01-\x2B\x2D-\x7F]+`
	kafkaPrintable = `[\x21-\x2B\x2D-\x7E]+`
)

// brokerScramUser is ScramSaslServer's reading of a client-first message:
// the user is the unescaped saslname; an authorization id, compared as
// written with the unescaped user, must be empty or equal to it; with the
// tokenauth extension "true" (any case; the last of repeated extensions
// wins, as Utils.parseMap keeps it) the saslname is a delegation token id
// and the principal is its owner.
func brokerScramUser(msg []byte) (string, error) {
	m := kafkaClientFirst.FindStringSubmatch(string(msg))
	if m == nil {
		return "", errors.New("message outside Kafka's client-first grammar (the broker refuses it)")
	}
	authzID, saslName, extensions := m[1], m[2], m[3]
	// ScramFormatter.username, step by step.
	user := strings.ReplaceAll(saslName, "=2C", ",")
	if strings.Contains(strings.ReplaceAll(user, "=3D", ""), "=") {
		return "", errors.New("user name has an = that is not =2C or =3D (the broker refuses it)")
	}
	user = strings.ReplaceAll(user, "=3D", "=")
	if authzID != "" && authzID != user {
		return "", errors.New("authorization id differs from the user (the broker refuses it)")
	}
	var tokenAuth string
	for _, attr := range strings.Split(strings.TrimPrefix(extensions, ","), ",") {
		if k, v, _ := strings.Cut(attr, "="); k == "tokenauth" {
			tokenAuth = v
		}
	}
	if strings.EqualFold(tokenAuth, "true") {
		return "", fmt.Errorf("delegation token (tokenauth=%s): the principal is the token's owner, which only the broker knows", tokenAuth)
	}
	return user, nil
}
