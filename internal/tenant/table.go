package tenant

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// api is the name mapping of one API key. Write entries as keyed literals:
// the core may add fields.
type api struct {
	key int16
	// request rewrites req in place to the upstream's names; req is the
	// decoded request after every filter. nil: requests of key carry no
	// name (they are not decoded for the mapper).
	request func(ctx context.Context, m *Mapper, req kmsg.Request) error
	// response rewrites resp in place to the tenant's names and removes
	// what is not the tenant's; req is the request as sent upstream
	// (already mapped). nil: responses of key stay as they are.
	response func(m *Mapper, req kmsg.Request, resp kmsg.Response) error
	// responseStreamed, when set, reports versions whose responses need no
	// mapping (they carry only ids the request already checked): they stay
	// streamed.
	responseStreamed func(version int16) bool
	// fields lists the name-bearing field paths this entry handles, for the
	// completeness test: "req." or "resp." then the Go field path from the
	// message, slices implicit, e.g. "req.Topics.Topic",
	// "resp.Topics.Partitions.Errors.Topic".
	fields []string
}

// apis is the table: one entry per API key that carries a name.
func apis() []api {
	return append(topicAPIs(), groupAPIs()...)
}

// Answer, returned by a request function, makes the engine answer the
// client with Response (at the request's version) instead of forwarding
// the request: for requests the tenant may never make (a cluster ACL, say).
type Answer struct{ Response kmsg.Response }

func (a *Answer) Error() string { return "tenant: answered by kproxy" }

// AsAnswer reports the Answer err carries, if any.
func AsAnswer(err error) (*Answer, bool) {
	var a *Answer
	ok := errors.As(err, &a)
	return a, ok
}
