package policyconfig

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConfigRequirement is a parsed required_configs entry.
type ConfigRequirement struct {
	Key, Op, Value string
	// Number is Value read as a number (KafkaNumber), nil when Value is
	// not one: then only = and != apply, as string comparisons.
	Number *big.Rat
}

func (r ConfigRequirement) String() string { return r.Key + " " + r.Op + " " + r.Value }

// ParseConfigRequirement parses "KEY OP VALUE".
func ParseConfigRequirement(s string) (ConfigRequirement, error) {
	// Longest operators first, so ">=" is not read as ">".
	for _, op := range []string{">=", "<=", "!=", "=", ">", "<"} {
		key, value, ok := strings.Cut(s, op)
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if key == "" || value == "" || strings.ContainsAny(key, " <>=!") {
			break
		}
		n, isNumber := KafkaNumber(value)
		if op != "=" && op != "!=" && !isNumber {
			return ConfigRequirement{}, fmt.Errorf("%q: %s needs a decimal number (such as 2, -1, 0.5 or 1e6), not %q", s, op, value)
		}
		return ConfigRequirement{Key: key, Op: op, Value: value, Number: n}, nil
	}
	return ConfigRequirement{}, fmt.Errorf("%q is not KEY OP VALUE (OP one of = != < <= > >=), e.g. \"min.insync.replicas >= 2\"", s)
}

// plainDecimal is the number syntax on which Go and Java agree: an
// optional sign, digits with an optional fraction, an optional exponent.
var plainDecimal = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,2})?$`)

// maxNumberLen bounds the numbers KafkaNumber reads: far above any
// config's range (a Java long has 19 digits), and small enough that exact
// arithmetic on them is cheap.
const maxNumberLen = 64

// KafkaNumber reads a config value as a number the way Kafka's ConfigDef
// would, or reports that it is not one. Kafka trims characters up to
// U+0020 (Java's String.trim) and then parses LONG and INT configs with
// Long/Integer.parseInt (sign and decimal digits) and DOUBLE configs with
// Double.parseDouble, which also takes hex, "NaN", "Infinity" and a d/f
// suffix. Only the syntax on which both languages agree is a number here:
// anything else, and exponents beyond two digits, is not, so a numeric
// requirement fails on it rather than compare a value the broker reads
// differently. The result is exact (no float rounding).
func KafkaNumber(s string) (*big.Rat, bool) {
	s = JavaTrim(s)
	if len(s) > maxNumberLen || !plainDecimal.MatchString(s) {
		return nil, false
	}
	n, ok := new(big.Rat).SetString(strings.TrimPrefix(s, "+"))
	return n, ok
}

// JavaTrim trims what Java's String.trim does: every character up to
// U+0020 at either end (control characters included, other Unicode
// spaces not), as Kafka does to config values before reading them.
func JavaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// Compression codec names, indexed by the codec number in a record batch's
// attributes.
func CompressionCodecs() []string { return []string{"none", "gzip", "snappy", "lz4", "zstd"} }

// ParseRequiredAcks returns the acks value a required_acks setting names.
func ParseRequiredAcks(s string) (int16, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "all", "-1":
		return -1, nil
	case "1":
		return 1, nil
	case "0":
		return 0, nil
	}
	return 0, fmt.Errorf("%q: must be all (or -1), 1 or 0", s)
}

// APIKeyByName returns the API key kmsg names s (case-insensitive).
func APIKeyByName(s string) (int16, bool) {
	for key := int16(0); key < 1000; key++ {
		if kmsg.RequestForKey(key) != nil && strings.EqualFold(kmsg.NameForKey(key), s) {
			return key, true
		}
	}
	return 0, false
}
