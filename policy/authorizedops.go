package policy

import (
	"math"
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// Responses that carry authorized operations (Metadata, DescribeCluster,
// DescribeGroups, the group describes, DescribeTopicPartitions) get them
// from the broker, computed for kproxy's own identity: they would show the
// principal what kproxy may do. withAuthorizedOps recomputes each from the
// policy for the principal, as Kafka computes them for the requester.

// notRequested is the value of an authorized-operations field the client
// did not ask for (INT32_MIN), left alone.
const notRequested = math.MinInt32

// withAuthorizedOps wraps a handler so that the answer's authorized
// operations are the principal's. Audit mode forwards them unchanged.
func withAuthorizedOps[R kmsg.Request](handle func(*reqCtx, R) filter.Verdict) func(*reqCtx, R) filter.Verdict {
	return func(c *reqCtx, req R) filter.Verdict {
		v := handle(c, req)
		if c.st.auditOnly {
			return v
		}
		return afterResponse(v, func(resp kmsg.Response) error {
			c.rewriteAuthorizedOps(reflect.ValueOf(resp), true)
			return nil
		})
	}
}

// rewriteAuthorizedOps walks v; top is true for the response itself, whose
// own field is the cluster's.
func (c *reqCtx) rewriteAuthorizedOps(v reflect.Value, top bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			c.rewriteAuthorizedOps(v.Elem(), top)
		}
		return
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			c.rewriteAuthorizedOps(v.Index(i), false)
		}
		return
	case reflect.Struct:
	default:
		return
	}
	rt, name := ResCluster, ClusterName
	if n, ok := stringField(v, "Topic"); ok {
		rt, name = ResTopic, n
	} else if n, ok := stringField(v, "Group"); ok {
		rt, name = ResGroup, n
	} else if n, ok := stringField(v, "GroupID"); ok {
		rt, name = ResGroup, n
	}
	for i := 0; i < v.NumField(); i++ {
		f, fv := v.Type().Field(i), v.Field(i)
		switch {
		case f.Name == "ClusterAuthorizedOperations" && fv.Kind() == reflect.Int32:
			if fv.Int() != notRequested {
				fv.SetInt(int64(c.authorizedOps(ResCluster, ClusterName)))
			}
		case f.Name == "AuthorizedOperations" && fv.Kind() == reflect.Int32:
			if fv.Int() != notRequested && (rt != ResCluster || top) {
				fv.SetInt(int64(c.authorizedOps(rt, name)))
			}
		case f.IsExported() && (fv.Kind() == reflect.Slice || fv.Kind() == reflect.Pointer || fv.Kind() == reflect.Struct):
			c.rewriteAuthorizedOps(fv, false)
		}
	}
}

// stringField is v's field name if it is a string or *string.
func stringField(v reflect.Value, name string) (string, bool) {
	f := v.FieldByName(name)
	switch {
	case !f.IsValid():
		return "", false
	case f.Kind() == reflect.String:
		return f.String(), true
	case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.String && !f.IsNil():
		return f.Elem().String(), true
	}
	return "", false
}

// authorizedOps is the bitfield of Kafka ACL operation codes (as the
// field carries them) the principal may perform on the resource, over the
// operations Kafka lists for its type. It asks the policy what-if
// questions, which authorize nothing: they are not recorded.
func (c *reqCtx) authorizedOps(rt ResourceType, name string) int32 {
	var bits int32
	for _, op := range rt.AuthorizedOperations() {
		if c.subj.Decide(op, rt, name).Allowed {
			bits |= 1 << op.Code()
		}
	}
	return bits
}
