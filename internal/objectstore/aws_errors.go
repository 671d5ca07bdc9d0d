package objectstore

import (
	"errors"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	"github.com/kproxy/kproxy/internal/errclass"
)

// classifyAWS puts an S3 client error into a class. An error without an
// answer from the store (connection refused, timeout, DNS) is retriable,
// so are throttling and server faults; a missing key is ErrMissing (a
// HEAD has no error body, only its 404); everything else the store said
// no to is ErrRejected.
func classifyAWS(err error) error {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return errclass.Mark(ErrRetriable, err)
	}
	switch api.ErrorCode() {
	case "NoSuchKey", "NoSuchUpload":
		return errclass.Mark(ErrMissing, err)
	case "NotFound":
		var resp *awshttp.ResponseError
		if errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusNotFound {
			return errclass.Mark(ErrMissing, err)
		}
	case "SlowDown", "Throttling", "ThrottlingException", "RequestTimeout",
		"InternalError", "ServiceUnavailable":
		return errclass.Mark(ErrRetriable, err)
	}
	if api.ErrorFault() == smithy.FaultServer {
		return errclass.Mark(ErrRetriable, err)
	}
	return errclass.Mark(ErrRejected, err)
}
