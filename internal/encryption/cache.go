package encryption

import (
	"sync"

	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/kms"
)

// sealers keeps the Sealer of each KEK's active DEK: building one costs
// allocations, using it none.
type sealers struct {
	mu     sync.Mutex
	byName map[string]sealerOf
}

type sealerOf struct {
	dek *kms.DEK
	s   *envelope.Sealer
}

// get is the Sealer of dek, the active DEK of KEK name.
func (c *sealers) get(name string, dek *kms.DEK) (*envelope.Sealer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.byName[name]; ok && cur.dek == dek {
		return cur.s, nil
	}
	s, err := envelope.NewSealerAEAD(dek.AEAD, dek.Wrapped, dek.KeyID)
	if err != nil {
		return nil, err
	}
	if c.byName == nil {
		c.byName = map[string]sealerOf{}
	}
	c.byName[name] = sealerOf{dek: dek, s: s} // the previous DEK is no longer handed out
	return s, nil
}

// maxOpeners bounds the Openers kept, as kms bounds the unwrapped DEKs.
const maxOpeners = kms.DefaultUnwrappedSize

// openers keeps the Opener of each unwrapped DEK.
type openers struct {
	mu    sync.Mutex
	byDEK map[*kms.DEK]*envelope.Opener
}

func (c *openers) get(dek *kms.DEK) (*envelope.Opener, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o, ok := c.byDEK[dek]; ok {
		return o, nil
	}
	o, err := envelope.NewOpenerAEAD(dek.AEAD)
	if err != nil {
		return nil, err
	}
	if c.byDEK == nil || len(c.byDEK) >= maxOpeners {
		c.byDEK = map[*kms.DEK]*envelope.Opener{} // the DEK cache evicted most of them too
	}
	c.byDEK[dek] = o
	return o, nil
}
