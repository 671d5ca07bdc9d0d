package policy

import (
	"fmt"
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/protocol"
)

// noCheck is the handler of APIs Kafka authorizes nothing for.
func noCheck(*reqCtx, kmsg.Request) filter.Verdict { return filter.Verdict{} }

// clusterOp is the handler of APIs that need op on the cluster and answer
// a denial with their top-level error code.
func clusterOp(op Operation) func(*reqCtx, kmsg.Request) filter.Verdict {
	return func(c *reqCtx, req kmsg.Request) filter.Verdict {
		if d := c.checkCluster(op); d != nil {
			return denyTopLevel(req, d)
		}
		return filter.Verdict{}
	}
}

// clusterOpWith is clusterOp for APIs whose responses carry errors per
// entry instead: build answers every entry of req with d.
func clusterOpWith[R kmsg.Request](op Operation, build func(req R, d *denial) kmsg.Response) func(*reqCtx, R) filter.Verdict {
	return func(c *reqCtx, req R) filter.Verdict {
		if d := c.checkCluster(op); d != nil {
			return filter.Verdict{Respond: build(req, d)}
		}
		return filter.Verdict{}
	}
}

// closeUnlessCluster is the handler of broker-internal APIs whose responses
// have nowhere to put an authorization error: a denial closes the
// connection.
func closeUnlessCluster(op Operation) func(*reqCtx, kmsg.Request) filter.Verdict {
	return func(c *reqCtx, req kmsg.Request) filter.Verdict {
		if d := c.checkCluster(op); d != nil {
			return filter.Verdict{Close: fmt.Errorf("%s: %s has no error field to carry it: closing the connection", d.msg, protocol.APIName(req.Key()))}
		}
		return filter.Verdict{}
	}
}

// groupOp is the handler of single-group APIs (JoinGroup, SyncGroup, ...),
// whose group is group(req).
func groupOp[R kmsg.Request](op Operation, group func(R) string) func(*reqCtx, R) filter.Verdict {
	return func(c *reqCtx, req R) filter.Verdict {
		if d := c.check(op, ResGroup, group(req)); d != nil {
			return denyTopLevel(req, d)
		}
		return filter.Verdict{}
	}
}

// denyTopLevel answers req wholly with d in its response's top-level error
// code (and message, where there is one). A response version with no
// top-level error code cannot say "denied", so the connection is closed
// instead, as the filter contract prescribes.
func denyTopLevel(req kmsg.Request, d *denial) filter.Verdict {
	resp := req.ResponseKind()
	if !setTopLevelError(resp, d) {
		return filter.Verdict{Close: fmt.Errorf("%s; %s v%d has no top-level error code to carry it: closing the connection",
			d.msg, protocol.APIName(req.Key()), req.GetVersion())}
	}
	return filter.Verdict{Respond: resp}
}

var stringPtrType = reflect.TypeOf((*string)(nil))

// setTopLevelError sets resp's ErrorCode and ErrorMessage fields and
// reports whether resp's version actually carries the code on the wire.
func setTopLevelError(resp kmsg.Response, d *denial) bool {
	v := reflect.ValueOf(resp).Elem()
	code := v.FieldByName("ErrorCode")
	if !code.IsValid() || code.Kind() != reflect.Int16 {
		return false
	}
	code.SetInt(int64(d.code))
	if msg := v.FieldByName("ErrorMessage"); msg.IsValid() && msg.Type() == stringPtrType {
		msg.Set(reflect.ValueOf(d.msgPtr()))
	}
	return carriesTopLevelError(resp, d.code)
}

// carriesTopLevelError encodes resp and reads it back: versions from before
// a field existed silently drop it.
func carriesTopLevelError(resp kmsg.Response, code int16) bool {
	back := kmsg.ResponseForKey(resp.Key())
	back.SetVersion(resp.GetVersion())
	if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
		return false
	}
	f := reflect.ValueOf(back).Elem().FieldByName("ErrorCode")
	return f.IsValid() && f.Int() == int64(code)
}
