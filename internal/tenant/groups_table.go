package tenant

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupAPIs is the table of the group, share-group, streams-group,
// transaction and ACL APIs: every API key kmsg knows whose messages carry a
// group id or a transactional id (their topic names and ids too).
func groupAPIs() []api {
	var t []api
	for _, part := range [][]api{
		classicGroupAPIs(),
		offsetAPIs(),
		consumerGroupAPIs(),
		shareGroupAPIs(),
		streamsGroupAPIs(),
		txnAPIs(),
		aclAPIs(),
	} {
		t = append(t, part...)
	}
	return t
}

// typedEntry builds the table entry of an API from functions on its
// concrete kmsg types; either function may be nil. Every entry here with
// a request mapping has a response mapping when its response names
// anything, so the request never needs to ask for the response (false).
// Broker-to-broker keys carrying group ids (the share-group state APIs)
// are refusedKeys of the core.
func typedEntry[Req kmsg.Request, Resp kmsg.Response](key int16,
	up func(ctx context.Context, m *Mapper, r Req) error,
	down func(m *Mapper, r Req, resp Resp) error,
	fields ...string,
) api {
	e := api{key: key, fields: fields}
	if up != nil {
		e.request = func(ctx context.Context, m *Mapper, req kmsg.Request) (bool, error) {
			r, ok := req.(Req)
			if !ok {
				return false, fmt.Errorf("tenant: key %d: request is %T", key, req)
			}
			return false, up(ctx, m, r)
		}
	}
	if down != nil {
		e.response = func(m *Mapper, req kmsg.Request, resp kmsg.Response) error {
			// req is nil when the request was not decoded (no request
			// mapping): down is then given the zero Req and must cope.
			r, ok := req.(Req)
			rs, ok2 := resp.(Resp)
			if !ok && req != nil || !ok2 {
				return fmt.Errorf("tenant: key %d: request %T, response %T", key, req, resp)
			}
			return down(m, r, rs)
		}
	}
	return e
}

// keepMapped keeps, in place and in order, the elements of list whose name
// (at *name(e)) maps down, rewriting the name; the others are removed, as
// if the upstream had not answered them.
func keepMapped[T any](list []T, name func(*T) *string, down func(string) (string, bool)) []T {
	kept := list[:0]
	for i := range list {
		n := name(&list[i])
		d, ok := down(*n)
		if !ok {
			continue
		}
		*n = d
		kept = append(kept, list[i])
	}
	clear(list[len(kept):])
	return kept
}

// downGroups keeps the tenant's groups of a response, in place and in
// order, their ids mapped back and their error messages cleaned; each kept
// group then goes to more, if not nil, for the rest of its fields. fields
// points at a group's id and error message.
func downGroups[G any](m *Mapper, groups []G, fields func(*G) (id, errorMessage *string), more func(*G)) []G {
	groups = keepMapped(groups, func(g *G) *string { id, _ := fields(g); return id }, m.DownGroup)
	for i := range groups {
		_, message := fields(&groups[i])
		m.DownMessage(message)
		if more != nil {
			more(&groups[i])
		}
	}
	return groups
}

// upEach rewrites every name of names to up(name).
func upEach(names []string, up func(string) string) {
	for i, n := range names {
		names[i] = up(n)
	}
}

// downNames keeps the names of names that map down, rewritten.
func downNames(names []string, down func(string) (string, bool)) []string {
	return keepMapped(names, func(s *string) *string { return s }, down)
}

// upPtr maps a nullable name; nil stays nil.
func upPtr(p *string, up func(string) string) {
	if p != nil {
		*p = up(*p)
	}
}

// downPtr maps a nullable name down; a name that is not the tenant's
// becomes nil (a nullable field that names nothing).
func downPtr(p **string, down func(string) (string, bool)) {
	if *p == nil {
		return
	}
	d, ok := down(**p)
	if !ok {
		*p = nil
		return
	}
	*p = &d
}
