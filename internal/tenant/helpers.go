package tenant

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// upTopics prefixes the topic name each element of ts holds (name returns
// a pointer to it).
func upTopics[T any](m *Mapper, ts []T, name func(*T) *string) {
	for i := range ts {
		p := name(&ts[i])
		*p = m.UpTopic(*p)
	}
}

// upTopicRefs prefixes the topic name and checks the topic id of each
// element of ts: a request names its topics by one or the other, by
// version.
func upTopicRefs[T any](c *mapCtx, ts []T, ref func(*T) (*string, *[16]byte)) {
	for i := range ts {
		name, id := ref(&ts[i])
		*name = c.m.UpTopic(*name)
		*id = c.upID(*id)
	}
}

// downTopics maps the topic name of each element of ts back to the
// tenant's, dropping (in place) the elements that are not the tenant's.
func downTopics[T any](m *Mapper, ts []T, name func(*T) *string) []T {
	kept := ts[:0]
	for i := range ts {
		p := name(&ts[i])
		down, ok := m.DownTopic(*p)
		if !ok {
			continue
		}
		*p = down
		kept = append(kept, ts[i])
	}
	clear(ts[len(kept):])
	return kept
}

// upNullableTopic prefixes *p when it is set.
func (m *Mapper) upNullableTopic(p **string) {
	if *p != nil {
		s := m.UpTopic(**p)
		*p = &s
	}
}

// downNullableTopic maps *p back when it is set; false when it is not the
// tenant's.
func (m *Mapper) downNullableTopic(p **string) bool {
	if *p == nil {
		return true
	}
	s, ok := m.DownTopic(**p)
	if ok {
		*p = &s
	}
	return ok
}

// typed runs f on req and resp as their types; a message of another type
// is an error (a bug in the table), never a panic.
func typedRequest[R kmsg.Request](f func(ctx context.Context, m *Mapper, req R) (bool, error)) func(context.Context, *Mapper, kmsg.Request) (bool, error) {
	return func(ctx context.Context, m *Mapper, req kmsg.Request) (bool, error) {
		r, ok := req.(R)
		if !ok {
			return false, fmt.Errorf("tenant: request mapping of %T given %T", *new(R), req)
		}
		return f(ctx, m, r)
	}
}

func typedResponse[R kmsg.Response](f func(m *Mapper, resp R) error) func(*Mapper, kmsg.Request, kmsg.Response) error {
	return func(m *Mapper, _ kmsg.Request, resp kmsg.Response) error {
		r, ok := resp.(R)
		if !ok {
			return fmt.Errorf("tenant: response mapping of %T given %T", *new(R), resp)
		}
		return f(m, r)
	}
}

// simpleRequest is a request mapping that never needs its response mapped
// beyond what ResponseNeed says.
func simpleRequest[R kmsg.Request](f func(m *Mapper, req R)) func(context.Context, *Mapper, kmsg.Request) (bool, error) {
	return typedRequest(func(_ context.Context, m *Mapper, req R) (bool, error) {
		f(m, req)
		return false, nil
	})
}

// mapCtx is a request mapping's context: the Mapper, and whether an id was
// disguised (then the response must be mapped to show the client its id
// again).
type mapCtx struct {
	ctx       context.Context
	m         *Mapper
	disguised bool
}

// upID is m.UpTopicID, remembering a disguise.
func (c *mapCtx) upID(id [16]byte) [16]byte {
	up := c.m.UpTopicID(c.ctx, id)
	c.disguised = c.disguised || up != id
	return up
}

// typedRequestCtx is a request mapping given a mapCtx: the response is
// mapped when it disguised an id.
func typedRequestCtx[R kmsg.Request](f func(c *mapCtx, req R)) func(context.Context, *Mapper, kmsg.Request) (bool, error) {
	return typedRequest(func(ctx context.Context, m *Mapper, req R) (bool, error) {
		c := mapCtx{ctx: ctx, m: m}
		f(&c, req)
		return c.disguised, nil
	})
}
