package bench

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strconv"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/encryption/envelope"
)

// sealedFillBytes is how many value bytes the sealed batch carries, as
// kfake's generated synthetic batch: about one megabyte.
const sealedFillBytes = 1 << 20

// startSealedUpstream starts an embedded synthetic cluster like the
// shared one, but whose fetches answer with a batch of records encrypted
// as kproxy-encryption encrypts them: values sealed under a data key
// local-kms generated under the bench's KEK, each with the marker header,
// compressed with the bench's codec. kproxy-encryption's consume loads
// then measure decryption, not a scan for the marker.
func startSealedUpstream(ctx context.Context, o *Options, kmsEndpoint string) (*upstream, error) {
	batch, err := sealedBatch(ctx, o, kmsEndpoint)
	if err != nil {
		return nil, err
	}
	c, err := kfake.NewCluster(
		kfake.NumBrokers(o.Brokers),
		kfake.SeedTopics(int32(o.Partitions), o.Topic, VCPrefix+o.Topic),
		kfake.BlackholeProduce(),
		kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(upstreamMaxMessageBytes)}),
		kfake.SyntheticFetch(kfake.SyntheticBatch{Batch: batch}),
	)
	if err != nil {
		return nil, fmt.Errorf("start embedded kfake upstream of sealed records: %w", err)
	}
	addrs := c.ListenAddrs()
	return &upstream{seeds: addrs, brokers: addrs, synthetic: true, cluster: c}, nil
}

// sealedBatch is one v2 record batch of about sealedFillBytes of values
// of o.RecordBytes each, sealed for o.Topic under a fresh data key.
func sealedBatch(ctx context.Context, o *Options, kmsEndpoint string) ([]byte, error) {
	out, err := kmsCall(ctx, kmsEndpoint, "GenerateDataKey", map[string]any{"KeyId": encryptionKeyAlias, "KeySpec": "AES_256"})
	if err != nil {
		return nil, err
	}
	var key struct{ Plaintext, CiphertextBlob, KeyId string }
	if err := json.Unmarshal(out, &key); err != nil {
		return nil, fmt.Errorf("GenerateDataKey answer: %w", err)
	}
	plaintext, err := base64.StdEncoding.DecodeString(key.Plaintext)
	if err != nil {
		return nil, fmt.Errorf("GenerateDataKey plaintext: %w", err)
	}
	wrapped, err := base64.StdEncoding.DecodeString(key.CiphertextBlob)
	if err != nil {
		return nil, fmt.Errorf("GenerateDataKey ciphertext blob: %w", err)
	}
	sealer, err := envelope.NewSealer(envelope.DEK{Plaintext: plaintext, Wrapped: wrapped, KEKID: key.KeyId})
	if err != nil {
		return nil, err
	}
	marker, err := sealer.Marker(envelope.Value)
	if err != nil {
		return nil, err
	}
	n := max(sealedFillBytes/o.RecordBytes, 1)
	var recs []byte
	value := make([]byte, o.RecordBytes)
	for i := range n {
		// Like kfake's synthetic values: the record's index, repeated.
		fill := strconv.AppendInt(nil, int64(i), 10)
		for j := range value {
			value[j] = fill[j%len(fill)]
		}
		sealed, err := sealer.SealValue(nil, envelope.Value, o.Topic, value)
		if err != nil {
			return nil, err
		}
		r := kmsg.Record{OffsetDelta: int32(i), Value: sealed, Headers: []kmsg.Header{{Key: envelope.HeaderName, Value: marker}}}
		enc := r.AppendTo(nil)[1:] // drop the placeholder length (varint 0 is one byte)
		recs = binary.AppendVarint(recs, int64(len(enc)))
		recs = append(recs, enc...)
	}
	var attrs int16
	if o.Compression == "lz4" {
		c, err := kgo.DefaultCompressor(kgo.Lz4Compression())
		if err != nil {
			return nil, err
		}
		packed, used := c.Compress(new(bytes.Buffer), recs)
		recs, attrs = bytes.Clone(packed), int16(used)
	}
	const timestamp = 1600000000000
	b := kmsg.RecordBatch{Magic: 2, Attributes: attrs, LastOffsetDelta: int32(n - 1), FirstTimestamp: timestamp, MaxTimestamp: timestamp,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(n), Records: recs}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw, nil
}
