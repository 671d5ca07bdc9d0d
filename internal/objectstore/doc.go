// Package objectstore is where large-message offload keeps values: an
// S3 bucket (AWS S3 or any server speaking its API) reached through the
// AWS SDK's S3 client. Values stream in and out: a Put holds at most one
// part in memory and computes the SHA-256 as it goes, a Get hands the
// body over as it arrives. Every error is in one of three classes
// (errors.go), which is all the offload filter decides on.
package objectstore
