package filter

// Phase is where in the chain a filter runs, from the client's side to the
// cluster's. Requests pass the phases in ascending order and responses in
// descending order, so each filter sees a response in the shape it left
// the request: the name boundary restores a tenant's names before the
// policy hides what the principal may not see, and the address rewriter
// speaks last to the client. Within a phase, filters run in the order they
// were added.
type Phase uint8

const (
	// PhaseAddresses: broker addresses the client is told, rewritten to
	// the listener it came in on.
	PhaseAddresses Phase = iota + 1
	// PhaseNegotiate: what the connection may speak (the ApiVersions clamp,
	// the SASL stage's version advertisement).
	PhaseNegotiate
	// PhaseAuthorize: who may do what (the engine's session guards, then
	// the policy).
	PhaseAuthorize
	// PhaseProgram: the embedding program's own filters (the default).
	PhaseProgram
	// PhaseNames: the virtual cluster's name boundary: every phase before
	// it sees the tenant's names.
	PhaseNames
	// PhaseQuota: how much they may do (quotas and their throttling),
	// last before the cluster and first from it: only a request that
	// reaches the cluster costs quota (one a filter answered does not),
	// and the throttle time is set in the response as the cluster sent it.
	PhaseQuota
)

// String names the phase as docs and logs do.
func (p Phase) String() string {
	switch p {
	case PhaseAddresses:
		return "addresses"
	case PhaseNegotiate:
		return "negotiate"
	case PhaseAuthorize:
		return "authorize"
	case PhaseQuota:
		return "quota"
	case PhaseProgram:
		return "program"
	case PhaseNames:
		return "names"
	}
	return "unknown"
}
