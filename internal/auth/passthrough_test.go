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
		// What Kafka's grammar accepts and a stricter one did not, so
		// that kproxy saw ANONYMOUS while the broker saw alice.
		{ScramSHA256, []byte("n,,m=x,n=alice,r=abc"), "alice"},
		{ScramSHA256, []byte("n,,n=alice,r=abc,k=1,k=2"), "alice"},
		{ScramSHA256, []byte("n,,n=alice,r=abc,k=a=b,x=\x01 \x7f"), "alice"},
		{Plain, []byte("\x00alice\x00" + strings.Repeat("p", 300)), "alice"},
		{Plain, []byte("\x00" + strings.Repeat("u", 300) + "\x00pw"), strings.Repeat("u", 300)},
		{Plain, []byte("\x00jos\u00e9\x00pw"), "jos\u00e9"},
		// tokenauth as Kafka reads it: the last one wins, any case.
		{ScramSHA256, []byte("n,,n=bob,r=abc,tokenauth=true,tokenauth=false"), "bob"},
		{ScramSHA256, []byte("n,,n=bob,r=abc,tokenauth=yes"), "bob"},
		{ScramSHA256, []byte("n,a=bob,n=bob,r=abc"), "bob"},
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
		{Plain, "carol\x00\x00s3cr3t-pw"},
		{Plain, "\x00carol\x00"},
		{Plain, "\x00carol\x00s3cr3t-pw\x00"},
		{Plain, "\x00car\xffol\x00s3cr3t-pw"},
		// An authorization id other than the user: the broker refuses.
		{Plain, "admin\x00carol\x00s3cr3t-pw"},
		{ScramSHA256, "n,a=admin,n=carol,r=abc"},
		{ScramSHA256, "n,a=we=2Cird,n=we=2Cird,r=abc"}, // compared as written
		// Delegation tokens: the principal is the owner, unknown here.
		{ScramSHA256, "n,,n=tokenid,r=abc,tokenauth=true"},
		{ScramSHA256, "n,,n=tokenid,r=abc,tokenauth=TRUE"},
		{ScramSHA256, "n,,n=tokenid,r=abc,tokenauth=false,tokenauth=true"},
		// Outside Kafka's grammar: the broker refuses.
		{ScramSHA256, "n,,r=abc"},
		{ScramSHA256, "p=tls-unique,,n=x,r=abc"},
		{ScramSHA256, "y,,n=alice,r=abc"},
		{ScramSHA256, "n,,n=jos\u00e9,r=abc"},
		{ScramSHA256, "n,,n=alice,r=abc,k1=v"},
		{ScramSHA256, "n,,n=alice,r=abc,k="},
		{ScramSHA256, "n,,m=,n=alice,r=abc"},
		{ScramSHA256, "n,,n=al=ice,r=abc"},
	} {
		_, err := UserFromClientMessage(tc.mech, []byte(tc.msg))
		if !errors.Is(err, ErrUnmappablePrincipal) {
			t.Errorf("%s %q: %v, want ErrUnmappablePrincipal", tc.mech, tc.msg, err)
			continue
		}
		assertNoSecret(t, err.Error(), "s3cr3t-pw")
	}
	if _, err := UserFromClientMessage("OAUTHBEARER", []byte("x")); !errors.Is(err, ErrUnsupportedMechanism) || !errors.Is(err, ErrUnmappablePrincipal) || !strings.Contains(err.Error(), "OAUTHBEARER") {
		t.Fatalf("unknown mechanism: %v", err)
	}
}
