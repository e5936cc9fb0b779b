// Package sopstest lets tests write SOPS files the way operators do: with
// the sops CLI (bin/sops, built by `make test-env`), PGP keys generated in
// a temporary GnuPG home, and an in-process sops key service that serves
// the cloud key types (AWS KMS, GCP KMS, Azure Key Vault, Vault transit)
// with its own keys, so the CLI can encrypt to them and regatta decrypt
// them without any cloud account.
package sopstest
