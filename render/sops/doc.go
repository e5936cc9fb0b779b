// Package sops reads and writes SOPS-encrypted YAML and JSON documents with
// age keys.
//
// It implements the sops file format itself (value encryption with
// AES-256-GCM, the MAC over the plaintext, the encryption rules, Shamir key
// groups) instead of linking github.com/getsops/sops/v3: sops' core package
// imports its key service and with it the AWS, GCP, Azure, Vault and Huawei
// SDKs (about 450 packages and 47 MB of binary), none of which age needs.
// Compatibility is pinned by testdata/compat: files encrypted by sops in
// several variants, and by this package, each with sops' own decryption,
// written by testdata/gen (a module of its own, which alone links sops).
//
// A caller decides which identities may be used for a file (a cluster that
// is allowed only the staging key cannot get production secrets
// decrypted). Errors name the file and never contain plaintext or key
// material. Files using encrypted_comment_regex/unencrypted_comment_regex
// are refused; comments are not kept in the output.
package sops
