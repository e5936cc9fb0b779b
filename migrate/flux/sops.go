package flux

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// sopsConfigFile is sops' configuration at the repository root.
const sopsConfigFile = ".sops.yaml"

// creationRule is one rule of .sops.yaml, the fields that name keys.
type creationRule struct {
	PathRegex string     `yaml:"path_regex"`
	Age       any        `yaml:"age"`
	PGP       any        `yaml:"pgp"`
	KMS       any        `yaml:"kms"`
	GCPKMS    any        `yaml:"gcp_kms"`
	AzureKV   any        `yaml:"azure_keyvault"`
	VaultURI  any        `yaml:"hc_vault_transit_uri"`
	HCKMS     any        `yaml:"hckms"`
	KeyGroups []keyGroup `yaml:"key_groups"`
	re        *regexp.Regexp
	keys      []sops.Key
}

type keyGroup struct {
	Age []string `yaml:"age"`
	PGP []string `yaml:"pgp"`
	KMS []struct {
		ARN string `yaml:"arn"`
	} `yaml:"kms"`
	GCPKMS []struct {
		ResourceID string `yaml:"resource_id"`
	} `yaml:"gcp_kms"`
	AzureKV []struct {
		VaultURL string `yaml:"vaultUrl"`
		Key      string `yaml:"key"`
		Version  string `yaml:"version"`
	} `yaml:"azure_keyvault"`
	Vault []string `yaml:"hc_vault"`
	HCKMS []struct {
		KeyID string `yaml:"key_id"`
	} `yaml:"hckms"`
}

// sopsScan is what the import learns about SOPS: .sops.yaml's rules and
// the keys of every encrypted file.
type sopsScan struct {
	rules []*creationRule
	// files are the keys of each encrypted file, by path.
	files map[string][]sops.Key
}

// scanSOPS reads .sops.yaml and the metadata of every encrypted file.
func (im *importer) scanSOPS() *sopsScan {
	s := &sopsScan{files: map[string][]sops.Key{}}
	s.rules = im.readCreationRules()
	_ = fs.WalkDir(im.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != "." {
			return fs.SkipDir
		}
		if d.IsDir() || d.Name() == sopsConfigFile {
			return nil
		}
		data, err := fs.ReadFile(im.fsys, p)
		if err != nil || !sops.IsEncrypted(data) {
			return nil
		}
		groups, err := sops.KeysOf(p, data)
		if err != nil {
			im.report.AddFinding(migrate.Finding{File: p, Message: fmt.Sprintf("SOPS metadata cannot be read: %v", err)})
			return nil
		}
		s.files[p] = slices.Concat(groups...)
		return nil
	})
	im.reportKeyTypes(s)
	return s
}

// readCreationRules parses .sops.yaml's creation_rules; a file that does
// not parse is reported.
func (im *importer) readCreationRules() []*creationRule {
	data, err := fs.ReadFile(im.fsys, sopsConfigFile)
	if err != nil {
		return nil
	}
	var cfg struct {
		CreationRules []*creationRule `yaml:"creation_rules"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		im.report.AddFinding(migrate.Finding{File: sopsConfigFile, Message: fmt.Sprintf("not read: %v", err)})
		return nil
	}
	for i, r := range cfg.CreationRules {
		if r.PathRegex != "" {
			if r.re, err = regexp.Compile(r.PathRegex); err != nil {
				im.report.AddFinding(migrate.Finding{File: sopsConfigFile, Field: fmt.Sprintf("creation_rules[%d].path_regex", i), Message: "not a regular expression"})
			}
		}
		r.keys = r.collect()
	}
	return cfg.CreationRules
}

// collect lists a rule's keys (comma-separated strings or lists, and key
// groups), as sops reads them.
func (r *creationRule) collect() []sops.Key {
	var out []sops.Key
	add := func(typ string, ids ...string) {
		for _, id := range ids {
			if id = strings.TrimSpace(id); id != "" {
				out = append(out, sops.Key{Type: typ, ID: id})
			}
		}
	}
	add(sops.KeyTypeAge, list(r.Age)...)
	for _, fp := range list(r.PGP) {
		add(sops.KeyTypePGP, spec.NormalizeFingerprint(fp))
	}
	add(sops.KeyTypeAWSKMS, kmsARNs(list(r.KMS))...)
	add(sops.KeyTypeGCPKMS, list(r.GCPKMS)...)
	add(sops.KeyTypeAzureKV, list(r.AzureKV)...)
	add(sops.KeyTypeVault, list(r.VaultURI)...)
	add(sops.KeyTypeHCKMS, list(r.HCKMS)...)
	for _, g := range r.KeyGroups {
		add(sops.KeyTypeAge, g.Age...)
		for _, fp := range g.PGP {
			add(sops.KeyTypePGP, spec.NormalizeFingerprint(fp))
		}
		for _, k := range g.KMS {
			add(sops.KeyTypeAWSKMS, k.ARN)
		}
		for _, k := range g.GCPKMS {
			add(sops.KeyTypeGCPKMS, k.ResourceID)
		}
		for _, k := range g.AzureKV {
			add(sops.KeyTypeAzureKV, strings.TrimRight(k.VaultURL, "/")+"/keys/"+k.Key+"/"+k.Version)
		}
		add(sops.KeyTypeVault, g.Vault...)
		for _, k := range g.HCKMS {
			add(sops.KeyTypeHCKMS, k.KeyID)
		}
	}
	return out
}

// list reads a .sops.yaml key field: a comma-separated string or a list.
func list(v any) []string {
	switch v := v.(type) {
	case string:
		return strings.Split(v, ",")
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, strings.Split(s, ",")...)
			}
		}
		return out
	}
	return nil
}

// kmsARNs drops the +role suffix sops accepts after an ARN.
func kmsARNs(ids []string) []string {
	for i, id := range ids {
		ids[i], _, _ = strings.Cut(strings.TrimSpace(id), "+")
	}
	return ids
}

// reportKeyTypes says which key types the fleet needs, from .sops.yaml
// and the encrypted files.
func (im *importer) reportKeyTypes(s *sopsScan) {
	ids := map[string]map[string]bool{}
	note := func(keys []sops.Key) {
		for _, k := range keys {
			if ids[k.Type] == nil {
				ids[k.Type] = map[string]bool{}
			}
			ids[k.Type][k.ID] = true
		}
	}
	for _, r := range s.rules {
		note(r.keys)
	}
	for _, keys := range s.files {
		note(keys)
	}
	if len(ids) == 0 {
		return
	}
	var parts []string
	for _, t := range sops.KeyTypes {
		if n := len(ids[t]); n > 0 {
			parts = append(parts, fmt.Sprintf("%s (%d %s)", t, n, plural(n, "key")))
		}
	}
	at := sopsConfigFile
	if len(s.rules) == 0 {
		at = slices.Sorted(maps.Keys(s.files))[0]
	}
	im.report.AddFinding(migrate.Finding{File: at, Message: fmt.Sprintf(
		"%d SOPS-encrypted %s; the fleet needs these key types: %s. Give `regatta run` their private keys or credentials (docs/operations.md, SOPS keys)",
		len(s.files), plural(len(s.files), "file"), strings.Join(parts, ", "))})
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// reportDecryption carries a Kustomization's decryption over: regatta
// decrypts with the keys given to `regatta run`, not with a Secret per
// Kustomization; the report names the Secret whose keys it needs.
func (im *importer) reportDecryption(ks object) {
	ref := migrate.Str(ks.obj, "spec", "decryption", "secretRef", "name")
	if ref == "" {
		im.report.Add(ks.doc, "spec.decryption", "SOPS decryption carried over: Flux decrypts these files with the controller's own credentials (workload identity, environment); give `regatta run` the same (docs/operations.md)")
		return
	}
	im.report.Add(ks.doc, "spec.decryption.secretRef", "SOPS decryption carried over: give `regatta run` the keys of Secret %s/%s "+
		"(*.agekey: --sops-age-key-file; *.asc: import into --sops-gnupg-home; sops.vault-token: VAULT_TOKEN; sops.aws-kms, sops.gcp-kms, sops.azure-kv: the provider's environment variables; docs/operations.md); "+
		"the cluster's spec.decryption lists the keys its files are encrypted to", ks.namespace(), ref)
}

// clusterKeys gathers a cluster's spec.decryption: the keys of the
// encrypted files under the paths of all its Kustomizations (regatta
// decrypts them all), set only when one of them has SOPS decryption.
type clusterKeys struct {
	d      spec.Decryption
	wanted bool
	// unlisted: a file uses a key type spec.decryption cannot list, so
	// the cluster is not restricted.
	unlisted bool
}

func (s *sopsScan) add(ck *clusterKeys, b *build) {
	ck.wanted = ck.wanted || migrate.Str(b.ks.obj, "spec", "decryption", "provider") == "sops"
	d := s.decryptionOf(b.path)
	if d == nil {
		ck.unlisted = ck.unlisted || s.hasFilesUnder(b.path)
		return
	}
	for _, k := range keysOf(d) {
		sops.Allow(&ck.d, k)
	}
}

// decryption is the cluster's spec.decryption, or nil.
func (ck *clusterKeys) decryption() *spec.Decryption {
	if !ck.wanted || ck.unlisted || ck.d.IsEmpty() {
		return nil
	}
	return &ck.d
}

func (s *sopsScan) hasFilesUnder(dir string) bool {
	for f := range s.files {
		if under(f, dir) {
			return true
		}
	}
	return false
}

func under(file, dir string) bool {
	return dir == "." || dir == "" || strings.HasPrefix(file, path.Clean(dir)+"/")
}

// keysOf lists the keys of a spec.decryption.
func keysOf(d *spec.Decryption) []sops.Key {
	var out []sops.Key
	add := func(typ string, ids []string) {
		for _, id := range ids {
			out = append(out, sops.Key{Type: typ, ID: id})
		}
	}
	add(sops.KeyTypeAge, d.AgeRecipients)
	add(sops.KeyTypePGP, d.PGPFingerprints)
	add(sops.KeyTypeAWSKMS, d.AWSKMSARNs)
	add(sops.KeyTypeGCPKMS, d.GCPKMSResourceIDs)
	add(sops.KeyTypeAzureKV, d.AzureKeyVaultURLs)
	add(sops.KeyTypeVault, d.HCVaultTransitURIs)
	return out
}

// decryptionOf is the spec.decryption a cluster gets for a Kustomization
// with SOPS decryption: the keys of the encrypted files under its path
// and of the .sops.yaml rules that match them. It is nil when no file is
// encrypted there, or one uses a key type spec.decryption cannot list.
func (s *sopsScan) decryptionOf(dir string) *spec.Decryption {
	d := &spec.Decryption{}
	var files []string
	for f := range s.files {
		if under(f, dir) {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	for _, f := range files {
		keys := slices.Clone(s.files[f])
		for _, r := range s.rules {
			if r.re == nil && r.PathRegex == "" || r.re != nil && r.re.MatchString(f) {
				keys = append(keys, r.keys...)
				break
			}
		}
		for _, k := range keys {
			if !sops.Allow(d, k) {
				return nil
			}
		}
	}
	if d.IsEmpty() {
		return nil
	}
	return d
}
