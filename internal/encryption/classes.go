package encryption

import "github.com/twmb/franz-go/pkg/kmsg"

// class is what record encryption does with an API.
type class uint8

const (
	// passed: the API carries no records; it goes through untouched.
	passed class = iota + 1
	// encrypted: its requests carry records to store (Produce).
	encrypted
	// decrypted: its responses carry stored records (Fetch, ShareFetch).
	decrypted
)

// carriesRecords are the APIs whose messages carry record batches; every
// other API kmsg knows is passed. A test walks kmsg's messages for record
// bytes, so that an API added to the protocol with records fails it until
// it is classed here and handled in Register.
func carriesRecords() map[int16]class {
	return map[int16]class{
		kmsg.Produce.Int16():    encrypted,
		kmsg.Fetch.Int16():      decrypted,
		kmsg.ShareFetch.Int16(): decrypted,
	}
}

// classOf is key's class.
func classOf(key int16) class {
	if c, ok := carriesRecords()[key]; ok {
		return c
	}
	return passed
}
