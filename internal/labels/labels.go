// Package labels is kproxy's one vocabulary of metric label names and
// values. The audit log writes the same strings for the same things (its
// "decision", "quota" and "kind" fields), so a dashboard filter and a log
// query for one decision spell it alike.
package labels

// Label names.
const (
	API            = "api"
	Certificate    = "certificate"
	Commit         = "commit"
	Decision       = "decision"
	Error          = "error"
	GoVersion      = "go_version"
	Hash           = "hash"
	Kind           = "kind"
	Listener       = "listener"
	Mechanism      = "mechanism"
	NodeID         = "node_id"
	Operation      = "operation"
	Partition      = "partition"
	Principal      = "principal"
	Quota          = "quota"
	Reason         = "reason"
	Result         = "result"
	Rule           = "rule"
	Serial         = "serial"
	Side           = "side"
	Source         = "source"
	Topic          = "topic"
	Version        = "version"
	VirtualCluster = "virtual_cluster"
)

// Values of Result: how an operation kproxy attempted (a reload, an
// authentication, a fetch of keys or tokens) ended.
const (
	Success = "success"
	Failure = "failure"
)

// Values of Decision, in metrics and in the audit line's "decision" field.
const (
	Allow     = "allow"
	Deny      = "deny"
	AuditDeny = "audit_deny" // audit mode: would be denied, forwarded
	Hide      = "hide"       // left out of a listing
	Throttle  = "throttle"   // a quota throttled the request
)

// ResultOf is Result's value for an operation that returned err.
func ResultOf(err error) string {
	if err != nil {
		return Failure
	}
	return Success
}
