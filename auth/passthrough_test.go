package auth

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

func TestUserFromClientMessage(t *testing.T) {
	ctx := context.Background()
	_, plainFirst, _ := plain.Auth{User: "carol", Pass: "carol-pw"}.AsMechanism().Authenticate(ctx, "")
	_, scramFirst, _ := scram.Auth{User: "d,a=ve", Pass: "dave-pw"}.AsSha512Mechanism().Authenticate(ctx, "")
	for _, tc := range []struct {
		mech string
		msg  []byte
		want string
	}{
		{Plain, plainFirst, "carol"},
		{Plain, []byte("carol\x00carol\x00pw"), "carol"},
		{ScramSHA512, scramFirst, "d,a=ve"},
		{ScramSHA256, []byte("n,a=x,n=x,r=abc"), "x"},
	} {
		got, err := UserFromClientMessage(tc.mech, tc.msg)
		if err != nil || got != tc.want {
			t.Errorf("%s %q: %q, %v; want %q", tc.mech, tc.msg, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		mech string
		msg  string
	}{
		{Plain, "carol:s3cr3t-pw"},
		{Plain, "\x00\x00s3cr3t-pw"},
		{ScramSHA256, "n,,r=abc"},
		{ScramSHA256, "p=tls-unique,,n=x,r=abc"},
	} {
		_, err := UserFromClientMessage(tc.mech, []byte(tc.msg))
		if err == nil {
			t.Errorf("%s %q: no error", tc.mech, tc.msg)
			continue
		}
		assertNoSecret(t, err.Error(), "s3cr3t-pw")
	}
	if _, err := UserFromClientMessage("OAUTHBEARER", []byte("x")); !errors.Is(err, ErrUnsupportedMechanism) || !strings.Contains(err.Error(), "OAUTHBEARER") {
		t.Fatalf("unknown mechanism: %v", err)
	}
}
