package wire

import (
	"errors"
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Endpoint is one broker endpoint in a decoded response, reached through
// pointers into it so that a visitor may rewrite it in place.
type Endpoint struct {
	Field  string // where it lives, e.g. "Brokers"
	NodeID int32
	Host   *string
	Port   Port
	// NoNode marks Kafka's "no node" placeholder (node -1, empty host),
	// which an API such as FindCoordinator answers an error with: it
	// carries no address.
	NoNode bool
}

// Port points at an endpoint's port, which Kafka encodes as an int32 for
// broker endpoints and as a uint16 for KRaft listener endpoints.
type Port struct {
	i32 *int32
	u16 *uint16
}

// Int32Port and Uint16Port point a Port at a port field.
func Int32Port(p *int32) Port   { return Port{i32: p} }
func Uint16Port(p *uint16) Port { return Port{u16: p} }

// Get returns the port.
func (p Port) Get() int32 {
	if p.u16 != nil {
		return int32(*p.u16)
	}
	return *p.i32
}

// Set stores v, which must fit the field.
func (p Port) Set(v int32) error {
	if p.u16 == nil {
		*p.i32 = v
		return nil
	}
	if v < 0 || v > math.MaxUint16 {
		return fmt.Errorf("port %d does not fit a uint16 port field", v)
	}
	*p.u16 = uint16(v)
	return nil
}

// EndpointList is one place in a response that holds broker endpoints.
// Make one with ListOf or OneOf.
type EndpointList struct {
	Field string
	// at returns the i-th endpoint (false past the last) of a response of
	// the row's type, and an error for any other type. Indexing instead of
	// taking a callback keeps a visit free of allocations: a callback
	// handed to a function value always escapes.
	at func(resp kmsg.Response, i int) (Endpoint, bool, error)
}

// ErrWrongResponseType is returned for a response whose Go type is not
// the one its API's row describes.
var ErrWrongResponseType = errors.New("response type does not match its API")

// ListOf describes a list of endpoints in responses of type R: list returns
// it from a response, and at the endpoint of one element.
func ListOf[R kmsg.Response, E any](field string, list func(R) []E, at func(*E) Endpoint) EndpointList {
	return EndpointList{Field: field, at: func(resp kmsg.Response, i int) (Endpoint, bool, error) {
		r, ok := resp.(R)
		if !ok {
			return Endpoint{}, false, fmt.Errorf("%w: %T", ErrWrongResponseType, resp)
		}
		elems := list(r)
		if i >= len(elems) {
			return Endpoint{}, false, nil
		}
		e := at(&elems[i])
		e.Field = field
		return e, true, nil
	}}
}

// OneOf describes endpoints in responses of type R that are not one flat
// list: at returns the i-th, and false past the last (a nested list, or a
// single endpoint present at some versions only).
func OneOf[R kmsg.Response](field string, at func(r R, i int) (Endpoint, bool)) EndpointList {
	return EndpointList{Field: field, at: func(resp kmsg.Response, i int) (Endpoint, bool, error) {
		r, ok := resp.(R)
		if !ok {
			return Endpoint{}, false, fmt.Errorf("%w: %T", ErrWrongResponseType, resp)
		}
		e, ok := at(r, i)
		e.Field = field
		return e, ok, nil
	}}
}

// VisitEndpoints calls visit for every broker endpoint resp carries, in
// the order of a's lists, and stops at the first error visit returns. It
// fails for a response whose type is not a's. It does not allocate.
func (a API) VisitEndpoints(resp kmsg.Response, visit func(Endpoint) error) error {
	if resp == nil {
		return fmt.Errorf("%w: nil %s response", ErrWrongResponseType, a.Name)
	}
	for _, l := range a.Endpoints {
		for i := 0; ; i++ {
			e, ok, err := l.at(resp, i)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			if err := visit(e); err != nil {
				return err
			}
		}
	}
	return nil
}
