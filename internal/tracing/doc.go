// Package tracing exports OpenTelemetry spans for Kafka requests: a
// proxy.RequestObserver that samples requests at their header, hands the
// sampled ones' timing to a bounded queue without ever waiting, and turns
// them into spans (with the messaging semantic conventions and the
// in-proxy / upstream split) on a goroutine of its own.
package tracing
