package render

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/render/oci"
	"github.com/regatta-dev/regatta/render/sandbox"
	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

// ClusterFacts is what a render knows about the target cluster.
type ClusterFacts struct {
	Name string
	// Labels are the effective labels, classifier labels included.
	Labels map[string]string
	// Values is the cluster's free data (cluster.spec.values).
	Values            map[string]any
	KubernetesVersion string
	// APIVersions are the served group/versions (and group/version/Kind
	// entries) for Helm's .Capabilities.APIVersions.
	APIVersions []string
	// Decryption restricts SOPS decryption to the keys it lists
	// (cluster.spec.decryption); nil or empty allows every key.
	Decryption *spec.Decryption
}

// Request asks for one profile rendered for one cluster.
type Request struct {
	// FS is the repository tree at Revision; add-on paths are relative to
	// its root.
	FS fs.FS
	// Revision names the tree (a commit SHA). Two requests with the same
	// non-empty Revision must carry the same tree: cache keys computed for
	// a revision are reused without re-hashing.
	Revision string
	Profile  *spec.Profile
	Cluster  ClusterFacts
	// TreeHash optionally returns the Git tree (or blob) hash of a path,
	// making cache keys cheap; without it file contents are hashed. It
	// must fail for a path that does not exist.
	TreeHash func(path string) (string, error)
	// Event is the event of one instance of an event profile (.Event).
	Event *EventData
}

// Object is one rendered object and where it came from.
//
// The Unstructured is shared: the render cache holds it and hands the same
// pointer to every request with the same inputs (a fleet of clusters gets
// one object, not one per cluster), concurrently. It is READ-ONLY: never
// set labels, annotations or the namespace on it, set or remove fields of
// its Object map, or decode into it (a client's Patch or Update writes the
// server's answer into the object it is given). A caller that needs to
// change it changes a copy: o.DeepCopy(), or Result.DeepCopy for a whole
// result.
type Object struct {
	// Unstructured is shared and read-only (see Object).
	*unstructured.Unstructured
	// Source is the repository file the object came from, or the chart
	// template for a Helm add-on.
	Source string
}

// Phases of a Step. Plain YAML and Kustomize add-ons have one main step;
// a Helm add-on has its pre-install/pre-upgrade hooks before the release's
// objects and its post-* hooks after, each hook weight its own step.
const (
	PhasePre  = "pre"
	PhaseMain = "main"
	PhasePost = "post"
)

// Step is a group of objects applied together. Steps are in apply order:
// add-ons in profile order; within a Helm add-on, pre hooks by weight, the
// main objects, then post hooks by weight.
type Step struct {
	Addon  string
	Phase  string
	Weight int
	// NoWait: the step is applied without waiting for its health (the
	// add-on's wait: false).
	NoWait bool
	// Objects is the caller's slice (append, reorder or replace elements
	// freely); the objects it points to are shared and read-only.
	Objects []Object
	// Namespace is where the step's namespaced objects without a namespace
	// go: the Helm release namespace, the Kustomize targetNamespace, or
	// DefaultNamespace. Objects of
	// built-in kinds and of kinds whose CRD the render holds already carry
	// it; the apply engine places the others once the cluster tells their
	// scope.
	Namespace string
}

// Result is a rendered profile.
//
// A Result returned by Renderer.Render is the caller's own struct, with
// Steps and Objects slices of its own, but its objects are the render
// cache's, shared with every other request of the same inputs: they are
// READ-ONLY (see Object). Use DeepCopy for a result whose objects may be
// changed.
type Result struct {
	Profile string
	Steps   []Step
	// Hash is a hash of the rendered output (skip the apply when unchanged).
	Hash string
	// Key is the input cache key the result is stored under.
	Key string
	// Artifacts are the OCI artifacts the add-ons were read from, in
	// add-on order, each with the digest its selector resolved to.
	Artifacts []Artifact
}

// Artifact is the OCI artifact an add-on's files came from.
type Artifact struct {
	Addon string
	// URL is the add-on's oci:// URL; Digest is what its tag, semver
	// range or digest resolved to (sha256:...).
	URL    string
	Digest string
}

// Objects returns the objects of all steps in apply order.
func (r *Result) Objects() []Object {
	var out []Object
	for _, s := range r.Steps {
		out = append(out, s.Objects...)
	}
	return out
}

// DefaultCacheBytes bounds the result cache when Options.CacheBytes is 0.
const DefaultCacheBytes = 256 << 20

// DefaultSchemaIdleTimeout is the SchemaIdleTimeout regatta's commands use.
const DefaultSchemaIdleTimeout = time.Minute

// Options configures a Renderer.
type Options struct {
	// Helm renders charts; nil makes any Helm add-on an error.
	Helm *helm.Renderer
	// Sandbox runs Jsonnet and ytt add-ons in worker processes bounded in time
	// and memory (see render/sandbox and WorkerHandlers); nil runs them in
	// this process, bounded only in stack depth.
	Sandbox *sandbox.Pool
	// OCI pulls the artifacts of add-ons with an oci source; nil makes
	// such an add-on an error.
	OCI *oci.Client
	// Keys decrypts SOPS documents; nil makes any encrypted file an error.
	Keys *sops.Keyring
	// AllowRemoteBases lets kustomizations load remote (git, http) bases
	// and files. Off, they are refused with ErrRemoteRefused.
	AllowRemoteBases bool
	// LeaveEncrypted reads SOPS documents as they are instead of
	// decrypting them, for callers that look only at the structure of the
	// output (regatta import); such output must never be applied.
	LeaveEncrypted bool
	// CheckURL, when set, decides on every remote base or file a
	// kustomization names before kustomize fetches it (see
	// render/netpolicy); an error refuses the render. Chart repositories
	// are guarded by the Helm renderer's HTTP client.
	CheckURL func(ctx context.Context, url string) error
	// CacheBytes bounds the memory of cached results (estimated); 0 means
	// DefaultCacheBytes, a negative value disables caching.
	CacheBytes int64
	// TemplateLimits bound each template execution; zero fields take
	// DefaultTemplateLimits.
	TemplateLimits TemplateLimits
	// SchemaIdleTimeout releases kustomize's parsed OpenAPI schema (about
	// 4 MiB) once the Renderer built no kustomization for this long; the
	// next build parses it again (a fraction of a second). 0 keeps it for
	// the life of the process. The schema is process-wide: a release made
	// by one Renderer also makes the others parse it again.
	SchemaIdleTimeout time.Duration
}

// Renderer renders profiles. It is safe for concurrent use.
type Renderer struct {
	opts        Options
	cache       *cache
	templates   *templateCache
	limits      TemplateLimits
	keyringHash string
	schema      *schemaRelease
}

// New returns a Renderer.
func New(opts Options) *Renderer {
	switch {
	case opts.CacheBytes == 0:
		opts.CacheBytes = DefaultCacheBytes
	case opts.CacheBytes < 0:
		opts.CacheBytes = 0
	}
	limits := opts.TemplateLimits.withDefaults()
	return &Renderer{
		opts:        opts,
		cache:       newCache(opts.CacheBytes),
		templates:   newTemplateCache(templateFuncs(), limits),
		limits:      limits,
		schema:      &schemaRelease{after: opts.SchemaIdleTimeout, release: releaseSchema},
		keyringHash: keyringHash(opts),
	}
}

// Render renders req.Profile for req.Cluster, from the cache when every
// input is unchanged.
//
// The result's objects are SHARED and READ-ONLY: the cache keeps them and
// returns the same pointers to every later request with the same inputs,
// in any goroutine, so a change by one caller would reach every cluster
// that shares the render (and race with its readers). Callers that need to
// modify an object (set labels, annotations or a namespace, redact, apply
// with a client that writes the answer back) must DeepCopy it first, or
// the whole result with Result.DeepCopy. The Result struct and its Steps
// and Objects slices are the caller's: appending, sorting or replacing
// elements is safe. Not copying is deliberate: deep-copying on every hit
// was most of the CPU of planning a large fleet.
func (r *Renderer) Render(ctx context.Context, req Request) (*Result, error) {
	if req.FS == nil || req.Profile == nil {
		return nil, errors.New("render: request needs FS and Profile")
	}
	p, err := r.newPlan(ctx, req)
	if err != nil {
		return nil, err
	}
	return r.cachedRender(ctx, p)
}

// CacheStats returns how many renders were served from the cache (or
// shared with a concurrent identical render) and how many were computed.
func (r *Renderer) CacheStats() (hits, misses uint64) {
	return r.cache.hits.Load(), r.cache.misses.Load()
}
