package spec

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Decryption limits SOPS decryption to the listed master keys. A file
// rendered under it must be encrypted to at least one listed key (in
// enough key groups, for a Shamir threshold), and only listed keys are
// used to decrypt it. The zero value (no keys of any type) restricts
// nothing. Field names follow sops' own terms (.sops.yaml, the sops CLI).
type Decryption struct {
	// AgeRecipients are age public keys (age1...).
	AgeRecipients []string `yaml:"ageRecipients,omitempty"`
	// PGPFingerprints are OpenPGP key fingerprints (40 or 64 hex digits,
	// an optional 0x, spaces ignored).
	PGPFingerprints []string `yaml:"pgpFingerprints,omitempty"`
	// AWSKMSARNs are AWS KMS key ARNs (arn:aws:kms:<region>:<account>:key/<id>
	// or :alias/<name>).
	AWSKMSARNs []string `yaml:"awsKMSARNs,omitempty"`
	// GCPKMSResourceIDs are GCP KMS key resource IDs
	// (projects/<p>/locations/<l>/keyRings/<r>/cryptoKeys/<k>).
	GCPKMSResourceIDs []string `yaml:"gcpKMSResourceIDs,omitempty"`
	// AzureKeyVaultURLs are Azure Key Vault key URLs
	// (https://<vault>.vault.azure.net/keys/<name>[/<version>]; without a
	// version, every version of the key).
	AzureKeyVaultURLs []string `yaml:"azureKeyVaultURLs,omitempty"`
	// HCVaultTransitURIs are HashiCorp Vault transit key URIs
	// (https://vault:8200/v1/<engine>/keys/<name>).
	HCVaultTransitURIs []string `yaml:"hcVaultTransitURIs,omitempty"`
}

// IsEmpty reports whether d lists no key (and so restricts nothing).
func (d *Decryption) IsEmpty() bool {
	return d == nil || len(d.AgeRecipients)+len(d.PGPFingerprints)+len(d.AWSKMSARNs)+
		len(d.GCPKMSResourceIDs)+len(d.AzureKeyVaultURLs)+len(d.HCVaultTransitURIs) == 0
}

// Intersect returns the keys listed in both d and o (compared as sops
// compares them: fingerprints without 0x and spaces, case-insensitively).
// A nil or empty o leaves d as it is.
func (d *Decryption) Intersect(o *Decryption) *Decryption {
	if o.IsEmpty() {
		return d
	}
	if d == nil {
		return &Decryption{}
	}
	both := func(a, b []string, norm func(string) string) []string {
		var out []string
		for _, k := range a {
			if slices.ContainsFunc(b, func(x string) bool { return norm(x) == norm(k) }) {
				out = append(out, k)
			}
		}
		return out
	}
	return &Decryption{
		AgeRecipients:      both(d.AgeRecipients, o.AgeRecipients, strings.TrimSpace),
		PGPFingerprints:    both(d.PGPFingerprints, o.PGPFingerprints, NormalizeFingerprint),
		AWSKMSARNs:         both(d.AWSKMSARNs, o.AWSKMSARNs, strings.TrimSpace),
		GCPKMSResourceIDs:  both(d.GCPKMSResourceIDs, o.GCPKMSResourceIDs, strings.TrimSpace),
		AzureKeyVaultURLs:  both(d.AzureKeyVaultURLs, o.AzureKeyVaultURLs, NormalizeKeyURL),
		HCVaultTransitURIs: both(d.HCVaultTransitURIs, o.HCVaultTransitURIs, NormalizeKeyURL),
	}
}

// NormalizeFingerprint returns an OpenPGP fingerprint as sops compares
// it: upper-case hex without 0x or spaces.
func NormalizeFingerprint(fp string) string {
	fp = strings.ReplaceAll(strings.TrimSpace(fp), " ", "")
	if len(fp) > 2 && (fp[:2] == "0x" || fp[:2] == "0X") {
		fp = fp[2:]
	}
	return strings.ToUpper(fp)
}

// NormalizeKeyURL trims spaces and a trailing slash from a key URL.
func NormalizeKeyURL(u string) string {
	return strings.TrimRight(strings.TrimSpace(u), "/")
}

var (
	fingerprintRE = regexp.MustCompile(`^([0-9A-F]{40}|[0-9A-F]{64})$`)
	kmsARNRE      = regexp.MustCompile(`^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:(key|alias)/[A-Za-z0-9/_+=,.@:-]+$`)
	gcpKMSRE      = regexp.MustCompile(`^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$`)
)

// checkDecryption validates every key of a spec.decryption field.
func checkDecryption(rep report, field string, d *Decryption) {
	if d == nil {
		return
	}
	each := func(name string, keys []string, check func(string) string) {
		for i, k := range keys {
			if msg := check(k); msg != "" {
				rep.errorf(fmt.Sprintf("%s.%s[%d]", field, name, i), "%q is not %s", k, msg)
			}
		}
	}
	each("ageRecipients", d.AgeRecipients, func(k string) string {
		return unless(strings.HasPrefix(strings.TrimSpace(k), "age1"), "an age public key (age1...)")
	})
	each("pgpFingerprints", d.PGPFingerprints, func(k string) string {
		return unless(fingerprintRE.MatchString(NormalizeFingerprint(k)), "an OpenPGP fingerprint (40 or 64 hex digits)")
	})
	each("awsKMSARNs", d.AWSKMSARNs, func(k string) string {
		return unless(kmsARNRE.MatchString(k), "an AWS KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>)")
	})
	each("gcpKMSResourceIDs", d.GCPKMSResourceIDs, func(k string) string {
		return unless(gcpKMSRE.MatchString(k), "a GCP KMS key (projects/<p>/locations/<l>/keyRings/<r>/cryptoKeys/<k>)")
	})
	each("azureKeyVaultURLs", d.AzureKeyVaultURLs, func(k string) string {
		return unless(isKeyURL(k, "/keys/", 1, 2), "an Azure Key Vault key URL (https://<vault>.vault.azure.net/keys/<name>[/<version>])")
	})
	each("hcVaultTransitURIs", d.HCVaultTransitURIs, func(k string) string {
		return unless(isKeyURL(k, "/keys/", 1, 1), "a Vault transit key URI (https://<host>:8200/v1/<engine>/keys/<name>)")
	})
}

func unless(ok bool, msg string) string {
	if ok {
		return ""
	}
	return msg
}

// isKeyURL reports whether s is an http(s) URL whose path holds sep
// followed by between min and max path segments.
func isKeyURL(s, sep string, minSeg, maxSeg int) bool {
	u, err := url.Parse(NormalizeKeyURL(s))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return false
	}
	i := strings.LastIndex(u.Path, sep)
	if i < 0 {
		return false
	}
	n := len(strings.Split(u.Path[i+len(sep):], "/"))
	return u.Path[i+len(sep):] != "" && n >= minSeg && n <= maxSeg
}
