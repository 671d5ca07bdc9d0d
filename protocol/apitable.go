package protocol

import "github.com/kproxy/kproxy/internal/wire"

// API is one row of the API table: what kproxy knows about one Kafka API
// key (its name, how to make its messages, where its responses hold broker
// endpoints).
type API = wire.API

// APITable is the API table, one row per key; it never changes once built.
type APITable = wire.APITable

// Endpoint is one broker endpoint (node id, host, port) inside a decoded
// response, as an API row's endpoint lists find it.
type Endpoint = wire.Endpoint

// APIs returns the table of every API key kmsg knows, with the broker
// endpoints kproxy rewrites. It is shared and never changes.
func APIs() *APITable { return wire.APIs() }

// APIName is the Kafka name of apiKey ("Produce", "JoinGroup"), or
// "Unknown".
func APIName(apiKey int16) string { return wire.APIName(apiKey) }

// KnownAPI reports whether the table (kmsg) can encode and decode apiKey.
func KnownAPI(apiKey int16) bool { return wire.KnownAPI(apiKey) }

// MaxVersion is the highest version of apiKey the table can decode, or -1.
func MaxVersion(apiKey int16) int16 { return wire.MaxVersion(apiKey) }

// IsFlexible reports whether apiVersion of apiKey uses flexible (KIP-482)
// encoding, and with it the v2 request and v1 response headers. A version
// above the highest known is flexible if that one is: flexibility, once
// introduced, stays.
func IsFlexible(apiKey, apiVersion int16) bool { return wire.IsFlexible(apiKey, apiVersion) }
