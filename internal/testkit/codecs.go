package testkit

import "github.com/twmb/franz-go/pkg/kgo"

// Codec is a batch compression codec a producer may choose, by the name
// Kafka gives it (compression.type).
type Codec struct {
	Name  string
	Codec kgo.CompressionCodec
}

// Codecs are every codec a Kafka producer may choose, "none" first.
func Codecs() []Codec {
	return []Codec{
		{"none", kgo.NoCompression()},
		{"gzip", kgo.GzipCompression()},
		{"snappy", kgo.SnappyCompression()},
		{"lz4", kgo.Lz4Compression()},
		{"zstd", kgo.ZstdCompression()},
	}
}

// CodecNamed is the codec Kafka names name, and whether there is one.
func CodecNamed(name string) (kgo.CompressionCodec, bool) {
	for _, c := range Codecs() {
		if c.Name == name {
			return c.Codec, true
		}
	}
	return kgo.CompressionCodec{}, false
}
