package config

import (
	"math/big"

	"github.com/kproxy/kproxy/policy/policyconfig"
)

// The policy and audit sections are declared, validated and documented by
// the policy's own package, policyconfig; the names below are kept so that
// code written against this package still builds.

// Deprecated: use policyconfig's types of the same names.
type (
	Policy            = policyconfig.Policy
	Rule              = policyconfig.Rule
	Governance        = policyconfig.Governance
	ProduceGovernance = policyconfig.ProduceGovernance
	TopicGovernance   = policyconfig.TopicGovernance
	BrokerDefaults    = policyconfig.BrokerDefaults
	Audit             = policyconfig.Audit
	Quota             = policyconfig.Quota
	QuotaWindows      = policyconfig.QuotaWindows
	Pattern           = policyconfig.Pattern
	PrincipalMatcher  = policyconfig.PrincipalMatcher
	ConfigRequirement = policyconfig.ConfigRequirement
)

// Deprecated: use the constants of policyconfig.
const (
	PolicyModeEnforce           = policyconfig.PolicyModeEnforce
	PolicyModeAudit             = policyconfig.PolicyModeAudit
	PolicyDefaultDeny           = policyconfig.PolicyDefaultDeny
	PolicyDefaultAllow          = policyconfig.PolicyDefaultAllow
	DefaultAuditBufferSize      = policyconfig.DefaultAuditBufferSize
	AuditStdout                 = policyconfig.AuditStdout
	DefaultQuotaSamples         = policyconfig.DefaultQuotaSamples
	DefaultQuotaWindowSize      = policyconfig.DefaultQuotaWindowSize
	DefaultQuotaAuditSampleRate = policyconfig.DefaultQuotaAuditSampleRate
	PrincipalAny                = policyconfig.PrincipalAny
	PrincipalUser               = policyconfig.PrincipalUser
	PrincipalClientID           = policyconfig.PrincipalClientID
	PrincipalCIDR               = policyconfig.PrincipalCIDR
	PrincipalCN                 = policyconfig.PrincipalCN
	PrincipalListener           = policyconfig.PrincipalListener
	PrincipalClaim              = policyconfig.PrincipalClaim
	PrincipalVirtualCluster     = policyconfig.PrincipalVirtualCluster
)

// Deprecated: use policyconfig.ParsePrincipal.
func ParsePrincipal(s string) (PrincipalMatcher, error) { return policyconfig.ParsePrincipal(s) }

// Deprecated: use policyconfig.ParsePattern.
func ParsePattern(s string) (Pattern, error) { return policyconfig.ParsePattern(s) }

// Deprecated: use policyconfig.ParseConfigRequirement.
func ParseConfigRequirement(s string) (ConfigRequirement, error) {
	return policyconfig.ParseConfigRequirement(s)
}

// Deprecated: use policyconfig.KafkaNumber.
func KafkaNumber(s string) (*big.Rat, bool) { return policyconfig.KafkaNumber(s) }

// Deprecated: use policyconfig.JavaTrim.
func JavaTrim(s string) string { return policyconfig.JavaTrim(s) }

// Deprecated: use policyconfig.CompressionCodecs.
func CompressionCodecs() []string { return policyconfig.CompressionCodecs() }

// Deprecated: use policyconfig.ParseRequiredAcks.
func ParseRequiredAcks(s string) (int16, error) { return policyconfig.ParseRequiredAcks(s) }

// Deprecated: use policyconfig.APIKeyByName.
func APIKeyByName(s string) (int16, bool) { return policyconfig.APIKeyByName(s) }
