package notify

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"

	yaml "go.yaml.in/yaml/v3"

	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// RepoSecretFiles reads notifications' secretFile from the revision in
// force: a Secret manifest, SOPS-encrypted, decrypted with the daemon's
// keys (limited to the tenant's spec.decryption for a file of a tenant's
// folder). A file in clear is refused: credentials are never in the
// repository in clear. Errors name the file and the key, never a value.
type RepoSecretFiles struct {
	// InForce returns the tree and the repository of the revision in
	// force; a nil tree before the first.
	InForce func() (fs.FS, *spec.Repository)
	Keys    *sops.Keyring
}

// SecretFile implements SecretFiles.
func (r RepoSecretFiles) SecretFile(ctx context.Context, file string) (map[string][]byte, error) {
	var tree fs.FS
	var repo *spec.Repository
	if r.InForce != nil {
		tree, repo = r.InForce()
	}
	if tree == nil {
		return nil, fmt.Errorf("notification secret file %s: no revision in force yet", file)
	}
	fsys, allowed := tree, (*spec.Decryption)(nil)
	if t := tenantOf(repo, path.Clean(file)); t != nil {
		fsys, allowed = spec.Confine(tree, t.Root()), t.Spec.Decryption
	}
	resolved, err := spec.ResolvePath(fsys, file)
	if err != nil {
		return nil, fmt.Errorf("notification secret file %w", err)
	}
	data, err := fs.ReadFile(tree, resolved)
	if err != nil {
		return nil, fmt.Errorf("notification secret file %s: %w", file, err)
	}
	if !sops.IsEncrypted(data) {
		return nil, fmt.Errorf("notification secret file %s is not SOPS-encrypted: credentials are never in the repository in clear", file)
	}
	if r.Keys == nil {
		return nil, fmt.Errorf("notification secret file %s is SOPS-encrypted and no SOPS keys are configured (--sops-age-key-file)", file)
	}
	plain, err := r.Keys.Decrypt(ctx, resolved, data, allowed)
	if err != nil {
		return nil, err
	}
	return secretData(resolved, plain)
}

// tenantOf is the tenant whose folder holds the file, or nil.
func tenantOf(repo *spec.Repository, file string) *spec.Tenant {
	if repo == nil {
		return nil
	}
	for _, t := range repo.Tenants {
		if spec.Inside(t.Root(), file) {
			return t
		}
	}
	return nil
}

// secretManifest is what a secret file's Secret holds.
type secretManifest struct {
	Kind       string            `yaml:"kind"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
}

// secretData returns the keys of the first Secret among the file's
// documents: data (base64) and stringData, which wins as in the API
// server.
func secretData(file string, plain []byte) (map[string][]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(plain))
	for {
		var s secretManifest
		err := dec.Decode(&s)
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("notification secret file %s holds no Secret manifest (kind: Secret)", file)
		}
		if err != nil {
			return nil, fmt.Errorf("notification secret file %s: not a Secret manifest (YAML)", file)
		}
		if s.Kind != "Secret" {
			continue
		}
		out := make(map[string][]byte, len(s.Data)+len(s.StringData))
		for k, v := range s.Data {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return nil, fmt.Errorf("notification secret file %s: data.%s is not valid base64", file, k)
			}
			out[k] = b
		}
		for k, v := range s.StringData {
			out[k] = []byte(v)
		}
		return out, nil
	}
}
