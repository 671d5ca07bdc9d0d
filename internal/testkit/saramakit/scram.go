// Package saramakit holds what tests that drive IBM/sarama through kproxy
// share. It is apart from testkit so that only those tests link sarama.
package saramakit

import (
	"context"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SCRAMClient adapts franz-go's SCRAM client to sarama's SCRAMClient
// interface (sarama ships none): SCRAM-SHA-512 if SHA512 is set, else
// SCRAM-SHA-256. Use a new one per connection, as sarama's
// SCRAMClientGeneratorFunc does.
type SCRAMClient struct {
	SHA512 bool

	user, pass string
	sess       sasl.Session
	done       bool
}

// Begin keeps the credentials for the first Step.
func (c *SCRAMClient) Begin(user, pass, _ string) error {
	c.user, c.pass = user, pass
	return nil
}

// Step answers the server's challenge; the first call (with an empty
// challenge) returns the client-first message.
func (c *SCRAMClient) Step(challenge string) (string, error) {
	if c.sess == nil {
		a := scram.Auth{User: c.user, Pass: c.pass}
		mech := a.AsSha256Mechanism()
		if c.SHA512 {
			mech = a.AsSha512Mechanism()
		}
		sess, first, err := mech.Authenticate(context.Background(), "")
		c.sess = sess
		return string(first), err
	}
	done, out, err := c.sess.Challenge([]byte(challenge))
	c.done = done
	return string(out), err
}

// Done reports whether the server's final message was verified.
func (c *SCRAMClient) Done() bool { return c.done }
