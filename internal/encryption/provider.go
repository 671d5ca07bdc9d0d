package encryption

import (
	"context"

	"github.com/kproxy/kproxy/internal/kms"
)

// countingProvider counts a provider's calls by operation and outcome.
type countingProvider struct {
	kms.Provider
	m *metrics
}

func (p countingProvider) GenerateDataKey(ctx context.Context, keyID string) (kms.DataKey, error) {
	k, err := p.Provider.GenerateDataKey(ctx, keyID)
	p.m.kmsCalls.WithLabelValues(kmsGenerateDataKey, outcome(err)).Inc()
	return k, err
}

func (p countingProvider) Decrypt(ctx context.Context, wrapped []byte) ([]byte, error) {
	k, err := p.Provider.Decrypt(ctx, wrapped)
	p.m.kmsCalls.WithLabelValues(kmsDecrypt, outcome(err)).Inc()
	return k, err
}
