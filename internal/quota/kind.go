package quota

// Kind is one kind of rate quota.
type Kind int

// Rate quota kinds.
const (
	Produce Kind = iota
	Fetch
	Request
	ConnectionCreation
	numKinds
)

// String is the kind as metrics label it.
func (k Kind) String() string {
	switch k {
	case Produce:
		return "produce"
	case Fetch:
		return "fetch"
	case Request:
		return "request"
	case ConnectionCreation:
		return "connection_creation"
	}
	return "unknown"
}
