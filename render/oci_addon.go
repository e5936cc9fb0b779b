package render

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/regatta-dev/regatta/render/oci"
	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// errNoOCI is the failure of an OCI-sourced add-on without Options.OCI.
var errNoOCI = errors.New("oci: no artifact client configured (Options.OCI)")

// useArtifact makes an OCI-sourced add-on read its files from the
// artifact: it resolves the selector to a digest, pulls the artifact and
// returns it (nil for an add-on without an OCI source).
func (a *addonRender) useArtifact(ap *addonPlan) (*Artifact, error) {
	o := ap.addon.OCI
	if o == nil {
		return nil, nil
	}
	field := fmt.Sprintf("spec.addons[%d].oci", ap.index)
	cr, err := a.ociCredentials(ap)
	if err != nil {
		return nil, err
	}
	digest, err := a.r.ociDigest(a.ctx, ap, cr)
	if err != nil {
		return nil, a.fieldError(field, err)
	}
	if err := a.verifyArtifact(ap, digest, cr); err != nil {
		return nil, err
	}
	files, err := a.r.opts.OCI.Pull(a.ctx, o.URL, digest, cr)
	if err != nil {
		return nil, a.fieldError(field, err)
	}
	a.fs = newRepoFS(files)
	return &Artifact{Addon: ap.addon.Name, URL: o.URL, Digest: digest}, nil
}

// String names the artifact: oci://registry/repository@digest.
func (a Artifact) String() string { return a.URL + "@" + a.Digest }

// ociDigest resolves an OCI-sourced add-on's selector.
func (r *Renderer) ociDigest(ctx context.Context, ap *addonPlan, cr oci.Credentials) (string, error) {
	if r.opts.OCI == nil {
		return "", errNoOCI
	}
	o := ap.addon.OCI
	every, _ := time.ParseDuration(o.Interval) // validated when loading; empty is the default
	return r.opts.OCI.Resolve(ctx, o.URL, oci.Selector{Tag: o.Tag, Semver: o.Semver, Digest: o.Digest, Interval: every}, cr)
}

// RefreshOCI resolves url's tag or semver range again, once for every
// cluster, as its interval comes due (oci.Client.Refresh): the passes
// that follow read the answer from memory. It reports whether the digest
// moved (or was never resolved, or the registry failed).
func (r *Renderer) RefreshOCI(ctx context.Context, url, tag, semver string) (bool, error) {
	if r.opts.OCI == nil {
		return false, nil
	}
	return r.opts.OCI.Refresh(ctx, url, tag, semver)
}

// ociCredentials reads the registry login of an OCI source's secretRef:
// a Secret manifest of the repository (the tenant's folder for a tenant),
// decrypted with the keys the profile may use. Errors never show it. The
// file is read (through the profile's confinement) every time, but
// decrypted once per content and keys: a key is computed per cluster and
// pass.
func (a *addonRender) ociCredentials(ap *addonPlan) (oci.Credentials, error) {
	ref := ap.addon.OCI.SecretRef
	if ref == nil {
		return oci.Credentials{}, nil
	}
	field := fmt.Sprintf("spec.addons[%d].oci.secretRef", ap.index)
	dref := spec.DataReference{Kind: "Secret", Name: ref.Name, Path: ref.Path}
	file, raw, err := a.readDataFile(field, dref)
	if err != nil {
		return oci.Credentials{}, err
	}
	key := a.credentialsKey(ref.Name, ap.addon.OCI.URL, raw)
	if c, ok := a.r.cache.logins.get(key); ok {
		if c.encrypted {
			a.usedKeys.Store(true)
		}
		return c.creds, nil
	}
	data, err := a.dataOf(field, dref, file, raw)
	if err != nil {
		return oci.Credentials{}, err
	}
	config, ok := data[".dockerconfigjson"]
	if !ok {
		return oci.Credentials{}, a.fieldError(field, fmt.Errorf("Secret %s has no .dockerconfigjson", ref.Name))
	}
	cr, err := oci.DockerConfigCredentials([]byte(config), ap.addon.OCI.URL)
	if err != nil {
		return oci.Credentials{}, a.fieldError(field, fmt.Errorf("Secret %s: %w", ref.Name, err))
	}
	a.r.cache.logins.put(key, login{creds: cr, encrypted: sops.IsEncrypted(raw)}, int64(len(key)+len(cr.Username)+len(cr.Password)+64))
	return cr, nil
}

// login is a registry login decrypted from a Secret manifest.
type login struct {
	creds     oci.Credentials
	encrypted bool
}

// credentialsKey names what a login depends on: the Secret file's
// content, the Secret's name, the registry URL and the keys the profile
// may decrypt with.
func (a *addonRender) credentialsKey(name, url string, raw []byte) string {
	allowed, _ := json.Marshal(a.decryption)
	sum := sha256.Sum256(raw)
	return hashStrings("login", hex.EncodeToString(sum[:]), name, url, string(allowed),
		strconv.FormatBool(a.tenantDenied()), a.r.keyringHash)
}

// fromArtifact names the artifact in the objects' sources and in a
// failure's file: oci://registry/repository@digest//path.
func fromArtifact(artifact *Artifact, profileFile string, steps []Step, err error) ([]Step, error) {
	if artifact == nil {
		return steps, err
	}
	origin := artifact.String()
	for i := range steps {
		for j := range steps[i].Objects {
			steps[i].Objects[j].Source = origin + "//" + steps[i].Objects[j].Source
		}
	}
	var re *Error
	if errors.As(err, &re) && re.File != "" && re.File != profileFile {
		re.File = origin + "//" + re.File
	}
	return steps, err
}

// withOCI adds an OCI-sourced add-on's digest to its key: a tag or a
// range moves to new content without a commit.
func (r *Renderer) withOCI(ctx context.Context, p *plan, ap *addonPlan, k string) (string, error) {
	if ap.addon.OCI == nil {
		return k, nil
	}
	cr, err := r.newAddonRender(ctx, p, ap).ociCredentials(ap)
	if err != nil {
		return "", inAddon(p.req.Profile.Metadata.Name, ap.addon.Name, err)
	}
	digest, err := r.ociDigest(ctx, ap, cr)
	if err != nil {
		return "", inAddon(p.req.Profile.Metadata.Name, ap.addon.Name, err)
	}
	keyFile, err := r.newAddonRender(ctx, p, ap).publicKeyFile(ap)
	if err != nil {
		return "", inAddon(p.req.Profile.Metadata.Name, ap.addon.Name, err)
	}
	return hashStrings(k, "oci="+digest, keyFile), nil
}

// withRemote adds the digests of what an add-on reads from outside the
// repository (a repository chart, an OCI artifact) to its key.
func (r *Renderer) withRemote(ctx context.Context, p *plan, ap *addonPlan, k string) (string, error) {
	k, err := r.withChart(ctx, p, ap, k)
	if err != nil {
		return "", err
	}
	return r.withOCI(ctx, p, ap, k)
}

// verifyArtifact checks an OCI add-on's cosign signature when its
// oci.verify asks for one: any of its public keys must verify a signature
// of digest.
func (a *addonRender) verifyArtifact(ap *addonPlan, digest string, cr oci.Credentials) error {
	v := ap.addon.OCI.Verify
	if v == nil {
		return nil
	}
	field := fmt.Sprintf("spec.addons[%d].oci.verify", ap.index)
	pems, err := a.publicKeys(ap, field)
	if err != nil {
		return err
	}
	var errs []error
	for _, text := range pems {
		key, err := oci.ParsePublicKey(text)
		if err == nil {
			if err = a.r.opts.OCI.VerifyCosign(a.ctx, ap.addon.OCI.URL, digest, key, cr); err == nil {
				return nil
			}
		}
		errs = append(errs, err)
	}
	return a.fieldError(field, errors.Join(errs...))
}

// publicKeys are the PEM keys of an oci.verify: its publicKey, or the
// values of the keys ending in .pub of its Secret.
func (a *addonRender) publicKeys(ap *addonPlan, field string) ([]string, error) {
	v := ap.addon.OCI.Verify
	if v.PublicKeySecretRef == nil {
		return []string{v.PublicKey}, nil
	}
	ref := v.PublicKeySecretRef
	data, err := a.readData(field+".publicKeySecretRef", spec.DataReference{Kind: "Secret", Name: ref.Name, Path: ref.Path})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(data)) {
		if strings.HasSuffix(k, ".pub") {
			out = append(out, data[k])
		}
	}
	if len(out) == 0 {
		return nil, a.fieldError(field+".publicKeySecretRef", fmt.Errorf("Secret %s has no key ending in .pub", ref.Name))
	}
	return out, nil
}

// publicKeyFile is the content hash of an oci.verify's Secret file, for
// the add-on's key ("" without one): a new key must verify again.
func (a *addonRender) publicKeyFile(ap *addonPlan) (string, error) {
	v := ap.addon.OCI.Verify
	if v == nil || v.PublicKeySecretRef == nil {
		return "", nil
	}
	ref := v.PublicKeySecretRef
	field := fmt.Sprintf("spec.addons[%d].oci.verify.publicKeySecretRef", ap.index)
	_, raw, err := a.readDataFile(field, spec.DataReference{Kind: "Secret", Name: ref.Name, Path: ref.Path})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return "verify=" + hex.EncodeToString(sum[:]), nil
}
