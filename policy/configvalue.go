package policy

import (
	"math/big"
	"strings"

	"github.com/kproxy/kproxy/policy/policyconfig"
)

// configValue is a topic config value as the broker will read it, for a
// required_configs comparison.
type configValue struct {
	num *big.Rat // nil: not a number
	// unlimited: a sentinel the broker reads as "no limit" (retention.ms
	// -1): above every number.
	unlimited bool
	// inherited: a sentinel the broker replaces with another config's
	// value (local.retention.ms -2 is retention.ms), which kproxy does not
	// see: no ordered comparison holds.
	inherited bool
	text      string // trimmed as Kafka trims it
}

// sentinelConfigs are the topic configs whose negative values are not
// quantities: "unlimited" (the log cleaner skips a negative retention;
// retention.ms takes -1, retention.bytes any negative number) except -2
// for local.retention.*, which is "as retention.*". A numeric rule must
// not read them as small numbers (retention.ms -1 is not <= 7 days).
var sentinelConfigs = map[string]bool{
	"retention.ms": true, "retention.bytes": true,
	"local.retention.ms": true, "local.retention.bytes": true,
}

var minusTwo = big.NewRat(-2, 1)

func readConfigValue(key, raw string) configValue {
	v := configValue{text: policyconfig.JavaTrim(raw)}
	n, ok := policyconfig.KafkaNumber(raw)
	if !ok {
		return v
	}
	v.num = n
	if sentinelConfigs[key] {
		switch {
		case n.Cmp(minusTwo) == 0 && strings.HasPrefix(key, "local."):
			v.inherited = true
		case n.Sign() < 0:
			v.unlimited = true
		}
	}
	return v
}

// satisfies compares a config value with a requirement on the same key.
// Numeric requirements compare exactly, with the key's sentinels read as
// the broker reads them; a value that is not a plain decimal number fails
// every numeric requirement, = and != included (fail closed: the broker
// may read it as a number kproxy does not see). A negative value fails an
// upper bound that is not itself negative: Kafka configs use negative
// values for "unlimited" or "disabled". String requirements compare the
// trimmed value: = exactly, != case-insensitively and against each
// comma-separated element too (a list config that contains the value is
// not "!=" it).
func satisfies(key, raw string, req policyconfig.ConfigRequirement) bool {
	v := readConfigValue(key, raw)
	if req.Number == nil {
		switch req.Op {
		case "=":
			return v.text == req.Value
		case "!=":
			if strings.EqualFold(v.text, req.Value) {
				return false
			}
			for _, el := range strings.Split(v.text, ",") {
				if strings.EqualFold(policyconfig.JavaTrim(el), req.Value) {
					return false
				}
			}
			return true
		}
		return false
	}
	if v.num == nil {
		return false
	}
	want := readConfigValue(key, req.Value)
	if v.inherited || want.inherited {
		// Only the literal sentinel itself is known to be what it is.
		return req.Op == "=" && v.inherited && want.inherited
	}
	var cmp int
	switch {
	case v.unlimited && want.unlimited:
		cmp = 0
	case v.unlimited:
		cmp = 1
	case want.unlimited:
		cmp = -1
	default:
		cmp = v.num.Cmp(want.num)
		if (req.Op == "<" || req.Op == "<=") && v.num.Sign() < 0 && want.num.Sign() >= 0 {
			return false
		}
	}
	switch req.Op {
	case "=":
		return cmp == 0
	case "!=":
		return cmp != 0
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	case ">=":
		return cmp >= 0
	}
	return false
}
