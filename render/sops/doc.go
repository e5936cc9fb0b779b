// Package sops decrypts SOPS documents with the sops library
// (github.com/getsops/sops/v3): its stores read and write YAML, JSON,
// dotenv, INI and binary files exactly as the sops CLI does, its key
// service decrypts AWS KMS, GCP KMS, Azure Key Vault, HashiCorp Vault
// transit and Huawei Cloud KMS keys with the credentials of the process
// environment, and remote sops key services are reached over its gRPC API.
// The MAC is verified as `sops -d` verifies it.
//
// What this package adds, because the library lacks it:
//
//   - A restriction per cluster and tenant (spec.Decryption): a file must
//     be encrypted to keys the cluster may use, in as many key groups as
//     its Shamir threshold needs, and only those keys are tried. For age
//     and PGP the restriction is enforced by the private key that
//     decrypts, not by the metadata a file's author wrote: age stanzas are
//     opened only with the identity of the recipient they name, and PGP
//     data keys are decrypted by gpg (gpg.go) whose status output names
//     the key used, since sops' pgp keysource uses any secret key of the
//     keyring and cannot say which. Remote key services are not asked for
//     age and PGP keys of a restricted file: they cannot prove which key
//     they used.
//   - A context for each decryption (sops' GetDataKeyWithKeyServices
//     takes none): gpg runs and remote calls end with it.
//   - Errors that name the file, each key by type and id, and what is
//     missing ("no AWS credentials", "PGP key 0x... not in the keyring"),
//     collected per key group; sops' own messages flatten them.
//   - Age identities from the caller (--sops-age-key-file) rather than
//     only sops' environment lookup, and IsEncrypted, which tells a SOPS
//     document from a plain file without knowing its store.
//   - Encrypt, for tests and the demo: sops' tree encryption lives in its
//     CLI package (common.EncryptTree), which the library API lacks.
//
// Errors never contain plaintext or key material.
package sops
