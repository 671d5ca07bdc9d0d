// Package encryption holds the attacks on record encryption, through the
// real kproxy binary with local-kms as the KMS in front of kfake: a
// producer forging the encryption marker, a principal the policy denies
// writes making kproxy call the KMS, and a tenant (or anyone who can write
// to the brokers) copying another tenant's ciphertext into its own topic
// to have kproxy decrypt it.
package encryption
