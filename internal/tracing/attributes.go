package tracing

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// kproxy's own span attributes, beside the messaging conventions.
const (
	attrAPIKey         = attribute.Key("kafka.api.key")
	attrAPIName        = attribute.Key("kafka.api.name")
	attrAPIVersion     = attribute.Key("kafka.api.version")
	attrCorrelationID  = attribute.Key("kafka.correlation_id")
	attrErrorCode      = attribute.Key("kafka.error_code")
	attrListener       = attribute.Key("kproxy.listener")
	attrNodeID         = attribute.Key("kproxy.node_id")
	attrPrincipal      = attribute.Key("kproxy.principal")
	attrVirtualCluster = attribute.Key("kproxy.virtual_cluster")
	attrRequestBytes   = attribute.Key("kproxy.request.bytes")
	attrResponseBytes  = attribute.Key("kproxy.response.bytes")
	attrLocal          = attribute.Key("kproxy.local")
	attrInProxyUs      = attribute.Key("kproxy.in_proxy_us")
	attrUpstreamUs     = attribute.Key("kproxy.upstream_us")
)

// operation is a request's messaging operation: its name and, for the
// operations the conventions type, its type.
func operation(key int16) (name string, typ attribute.KeyValue, typed bool) {
	switch key {
	case wire.ProduceKey:
		return "send", semconv.MessagingOperationTypeSend, true
	case wire.FetchKey:
		return "poll", semconv.MessagingOperationTypeReceive, true
	case int16(kmsg.OffsetCommit):
		return "commit", semconv.MessagingOperationTypeSettle, true
	}
	return protocol.APIName(key), attribute.KeyValue{}, false
}

// spanName is "{operation} {topic}", or the operation alone without a topic.
func spanName(t *engine.RequestTiming) string {
	name, _, _ := operation(t.Key)
	if t.Topic != "" {
		return name + " " + t.Topic
	}
	return name
}

// upstreamTime is the upstream round trip; zero for a local answer.
func upstreamTime(t *engine.RequestTiming) time.Duration {
	if t.SentUpstream.IsZero() || t.UpstreamFirstByte.IsZero() {
		return 0
	}
	return t.UpstreamFirstByte.Sub(t.SentUpstream)
}

// inProxyTime is the time spent inside kproxy: the whole request less the
// upstream round trip.
func inProxyTime(t *engine.RequestTiming) time.Duration {
	return t.Done.Sub(t.Start) - upstreamTime(t)
}

// attributes is the request span's attributes for t.
func attributes(t *engine.RequestTiming) []attribute.KeyValue {
	opName, opType, typed := operation(t.Key)
	attrs := make([]attribute.KeyValue, 0, 20)
	attrs = append(attrs,
		semconv.MessagingSystemKafka,
		semconv.MessagingOperationName(opName),
		attrAPIKey.Int(int(t.Key)),
		attrAPIName.String(protocol.APIName(t.Key)),
		attrAPIVersion.Int(int(t.Version)),
		attrCorrelationID.Int(int(t.CorrelationID)),
		attrListener.String(t.Listener),
		attrNodeID.Int(int(t.NodeID)),
		attrRequestBytes.Int(t.RequestBytes),
		attrResponseBytes.Int(t.ResponseBytes),
		attrLocal.Bool(t.Local),
		attrInProxyUs.Int64(inProxyTime(t).Microseconds()),
		attrUpstreamUs.Int64(upstreamTime(t).Microseconds()),
	)
	if typed {
		attrs = append(attrs, opType)
	}
	if t.Topic != "" {
		attrs = append(attrs, semconv.MessagingDestinationName(t.Topic))
	}
	if t.ClientID != "" {
		attrs = append(attrs, semconv.MessagingClientID(t.ClientID))
	}
	if t.Principal != "" {
		attrs = append(attrs, attrPrincipal.String(t.Principal))
	}
	if t.VirtualCluster != "" {
		attrs = append(attrs, attrVirtualCluster.String(t.VirtualCluster))
	}
	if t.Client.IsValid() {
		attrs = append(attrs, semconv.ClientAddress(t.Client.Addr().String()), semconv.ClientPort(int(t.Client.Port())))
	}
	if t.ErrorCode >= 0 {
		attrs = append(attrs, attrErrorCode.Int(int(t.ErrorCode)))
	}
	if t.ErrorCode > 0 {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errorName(t.ErrorCode)))
	}
	return attrs
}

// errorName is the Kafka name of a non-zero error code.
func errorName(code int16) string {
	if err, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return err.Message
	}
	return "UNKNOWN_SERVER_ERROR"
}
