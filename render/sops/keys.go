package sops

import (
	"slices"
	"strings"

	"github.com/getsops/sops/v3/keyservice"

	"github.com/regatta-dev/regatta/spec"
)

// Key types, as sops names them in SOPS_DECRYPTION_ORDER and
// `sops --help`.
const (
	KeyTypeAge     = "age"
	KeyTypePGP     = "pgp"
	KeyTypeAWSKMS  = "kms"
	KeyTypeGCPKMS  = "gcp_kms"
	KeyTypeAzureKV = "azure_kv"
	KeyTypeVault   = "hc_vault"
	KeyTypeHCKMS   = "hckms"
)

// KeyTypes lists every key type sops 3.13 knows.
var KeyTypes = []string{KeyTypeAge, KeyTypePGP, KeyTypeAWSKMS, KeyTypeGCPKMS, KeyTypeAzureKV, KeyTypeVault, KeyTypeHCKMS}

func isKeyType(t string) bool { return slices.Contains(KeyTypes, t) }

// Key is one master key of a file: its type (KeyType*), its human name for errors
// and its id as a spec.decryption field lists it.
type Key struct {
	Type string
	// ID is the age recipient, PGP fingerprint, ARN, resource ID or URL.
	ID string
}

// typeNames are the key types as messages name them.
var typeNames = map[string]string{
	KeyTypeAge:     "age",
	KeyTypePGP:     "PGP",
	KeyTypeAWSKMS:  "AWS KMS",
	KeyTypeGCPKMS:  "GCP KMS",
	KeyTypeAzureKV: "Azure Key Vault",
	KeyTypeVault:   "Vault transit",
	KeyTypeHCKMS:   "Huawei Cloud KMS",
}

func (k Key) String() string {
	id := k.ID
	switch k.Type {
	case KeyTypeAge:
		id = abbreviate(id)
	case KeyTypePGP:
		id = "0x" + id
	}
	return typeNames[k.Type] + " key " + id
}

// idOf names a key service key.
func idOf(key *keyservice.Key) Key {
	switch k := key.GetKeyType().(type) {
	case *keyservice.Key_AgeKey:
		return Key{KeyTypeAge, k.AgeKey.GetRecipient()}
	case *keyservice.Key_PgpKey:
		return Key{KeyTypePGP, spec.NormalizeFingerprint(k.PgpKey.GetFingerprint())}
	case *keyservice.Key_KmsKey:
		return Key{KeyTypeAWSKMS, k.KmsKey.GetArn()}
	case *keyservice.Key_GcpKmsKey:
		return Key{KeyTypeGCPKMS, k.GcpKmsKey.GetResourceId()}
	case *keyservice.Key_AzureKeyvaultKey:
		a := k.AzureKeyvaultKey
		return Key{KeyTypeAzureKV, spec.NormalizeKeyURL(a.GetVaultUrl()) + "/keys/" + a.GetName() + "/" + a.GetVersion()}
	case *keyservice.Key_VaultKey:
		v := k.VaultKey
		return Key{KeyTypeVault, spec.NormalizeKeyURL(v.GetVaultAddress()) + "/v1/" + strings.Trim(v.GetEnginePath(), "/") + "/keys/" + v.GetKeyName()}
	case *keyservice.Key_HckmsKey:
		return Key{KeyTypeHCKMS, k.HckmsKey.GetKeyId()}
	}
	return Key{"unknown", ""}
}

// isAllowed reports whether d lets key k be used; a nil or empty d allows
// every key.
func isAllowed(d *spec.Decryption, k Key) bool {
	if d.IsEmpty() {
		return true
	}
	eq := func(list []string, norm func(string) string) bool {
		return slices.ContainsFunc(list, func(x string) bool { return norm(x) == k.ID })
	}
	switch k.Type {
	case KeyTypeAge:
		return eq(d.AgeRecipients, strings.TrimSpace)
	case KeyTypePGP:
		return eq(d.PGPFingerprints, spec.NormalizeFingerprint)
	case KeyTypeAWSKMS:
		return eq(d.AWSKMSARNs, strings.TrimSpace)
	case KeyTypeGCPKMS:
		return eq(d.GCPKMSResourceIDs, strings.TrimSpace)
	case KeyTypeAzureKV:
		// A URL without a version allows every version of the key.
		return slices.ContainsFunc(d.AzureKeyVaultURLs, func(x string) bool {
			x = spec.NormalizeKeyURL(x)
			return x == strings.TrimSuffix(k.ID, "/") || strings.HasPrefix(k.ID, x+"/") && !strings.Contains(k.ID[len(x)+1:], "/")
		})
	case KeyTypeVault:
		return eq(d.HCVaultTransitURIs, spec.NormalizeKeyURL)
	}
	return false
}

// abbreviate shortens a public key for messages: age1qyqszqgp…
func abbreviate(recipient string) string {
	const keep = 12
	if len(recipient) <= keep+3 {
		return recipient
	}
	return recipient[:keep] + "…"
}
