package policy

import "github.com/kproxy/kproxy/internal/wire"

// Kafka error codes the policy answers with.
const (
	errUnknownTopicOrPartition            = int16(3)
	errMessageTooLarge                    = int16(10)
	errInvalidRequiredAcks                = wire.ErrCodeInvalidRequiredAcks
	errTopicAuthorizationFailed           = wire.ErrCodeTopicAuthorizationFailed
	errGroupAuthorizationFailed           = wire.ErrCodeGroupAuthorizationFailed
	errClusterAuthorizationFailed         = wire.ErrCodeClusterAuthorizationFailed
	errPolicyViolation                    = wire.ErrCodePolicyViolation
	errTransactionalIDAuthorizationFailed = wire.ErrCodeTransactionalIDAuthorizationFailed
	errOperationNotAttempted              = int16(55)
	errUnknownTopicID                     = int16(100)
)

// denial is why a part of a request is refused: the Kafka error code the
// client gets for it and, where the response has room, a message.
type denial struct {
	code int16
	msg  string
}

// msgPtr is the message for a response's nullable ErrorMessage field.
func (d *denial) msgPtr() *string {
	if d == nil || d.msg == "" {
		return nil
	}
	m := d.msg
	return &m
}
