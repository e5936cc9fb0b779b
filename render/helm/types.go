package helm

import (
	"io/fs"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Options configure a Renderer. The zero value works.
type Options struct {
	// CacheDir holds indexes and chart archives; default
	// os.UserCacheDir()/regatta/helm.
	CacheDir string
	// HTTPClient fetches indexes, archives and OCI artifacts; default
	// http.DefaultClient.
	HTTPClient *http.Client
	// PlainHTTP talks to oci:// registries over plain HTTP (tests, local
	// registries).
	PlainHTTP bool
	// RegistryConfig is a docker-style credentials file for oci://
	// registries; default Helm's (~/.config/helm/registry/config.json).
	RegistryConfig string
	// IndexTTL is how long an index.yaml or an OCI tag list is reused
	// before it is fetched again; default one minute.
	IndexTTL time.Duration
	// MaxArchiveSize bounds a downloaded index or chart archive; default
	// 64 MiB.
	MaxArchiveSize int64
	// FetchTimeout bounds one download (shared by concurrent renders that
	// need the same file); default two minutes.
	FetchTimeout time.Duration
	// Worker runs chart templates in child processes under time, memory
	// and output limits. Nil runs them in this process, without bounds
	// but the literal bombs a scan finds.
	Worker *WorkerOptions
}

// Request is one chart render.
type Request struct {
	// RepositoryURL is an http(s):// chart repository (with index.yaml) or
	// an oci:// registry path (the chart is RepositoryURL/ChartName). Empty
	// when ChartFS is set.
	RepositoryURL string
	// ChartFS and ChartPath locate a chart folder inside the fleet
	// repository tree.
	ChartFS   fs.FS
	ChartPath string
	// ChartName is required for repositories; ChartVersion may be an exact
	// version, a semver range or empty (the newest stable version).
	ChartName, ChartVersion string
	// Username and Password authenticate to the repository or registry.
	// They are sent only to the repository's host.
	Username, Password string

	ReleaseName, ReleaseNamespace string
	// Tests adds the chart's test hooks (helm.sh/hook: test) as a last
	// post step, as helm test would run them after the release.
	Tests bool
	// Values are the user values, already layered with MergeValues.
	Values map[string]any
	// KubeVersion (e.g. v1.37.2) becomes .Capabilities.KubeVersion; empty
	// keeps Helm's default.
	KubeVersion string
	// APIVersions (group/version and group/version/Kind) become
	// .Capabilities.APIVersions. When set they replace Helm's built-in list
	// (they are what the cluster serves); when empty Helm's list is used.
	APIVersions []string
}

// Phase orders steps: all "pre" steps, then "main", then "post".
type Phase string

// Phases of a render.
const (
	PhasePre  Phase = "pre"
	PhaseMain Phase = "main"
	PhasePost Phase = "post"
)

// Step is a group of objects applied together. Hook steps hold the hooks
// of one helm.sh/hook-weight, sorted by name (then kind); the main step has
// weight 0 and holds CRDs first, then the other objects in Helm's install
// order.
type Step struct {
	Phase   Phase
	Weight  int
	Objects []*unstructured.Unstructured
}

// Result is a rendered chart.
type Result struct {
	Steps []Step
	// ChartVersion is the version that was rendered.
	ChartVersion string
	// ChartDigest is sha256:<hex>: of the archive for chart repositories,
	// of the OCI manifest for registries, of the files for a chart folder.
	ChartDigest string
}
