package config

import (
	"fmt"

	"github.com/kproxy/kproxy/internal/encryption/encryptionconfig"
	"github.com/kproxy/kproxy/internal/kms"
)

// checkEncryptionKeys refuses `key:` templates through which topics of two
// virtual clusters could be encrypted under one KMS key (each cluster
// could then read the other's records), naming the key at fault. A
// virtual cluster without its own encryption section uses the top
// level's templates, under its own name.
func (c *Config) checkEncryptionKeys() []error {
	var uses []kms.KeyUse
	for i, vc := range c.VirtualClusters {
		switch {
		case vc.Encryption != nil:
			uses = append(uses, vc.Encryption.KeyUses(fmt.Sprintf("virtual_clusters[%d].%s", i, encryptionconfig.SectionName), vc.Name)...)
		case c.Encryption != nil:
			uses = append(uses, c.Encryption.KeyUses(encryptionconfig.SectionName, vc.Name)...)
		}
	}
	if err := kms.ValidateClusterKeys(uses); err != nil {
		return []error{err}
	}
	return nil
}
