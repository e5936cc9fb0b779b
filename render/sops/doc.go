// Package sops decrypts SOPS-encrypted YAML and JSON documents with age
// identities.
//
// It uses the sops library for parsing, value decryption and the MAC check,
// and recovers the data key from the file's age recipients itself, so that a
// caller decides which identities may be used for a file (a cluster that is
// allowed only the staging key cannot get production secrets decrypted).
//
// Errors name the file and never contain plaintext or key material.
package sops
