// Package spec defines the fleet repository format (regatta.dev/v1alpha1):
// the Cluster, Profile and Classifier kinds, and their strict loading,
// defaulting and validation. It is a leaf: it imports no other regatta
// package and no Kubernetes client, so it works offline on any fs.FS.
package spec

import "k8s.io/apimachinery/pkg/labels"

// APIVersion is the only version of the repository format this release reads.
const APIVersion = "regatta.dev/v1alpha1"

// Kinds of the repository format.
const (
	KindCluster    = "Cluster"
	KindProfile    = "Profile"
	KindClassifier = "Classifier"
)

// TypeMeta names the format version and kind of a document.
type TypeMeta struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
}

// ObjectMeta is the subset of Kubernetes object metadata the format uses.
type ObjectMeta struct {
	Name        string            `yaml:"name"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// Cluster is one member of the fleet: clusters/<name>/cluster.yaml.
type Cluster struct {
	TypeMeta `yaml:",inline"`
	Metadata ObjectMeta  `yaml:"metadata"`
	Spec     ClusterSpec `yaml:"spec"`

	// Source is where the document was read from; not part of the format.
	Source Source `yaml:"-"`
	// Files are the other YAML files of the cluster's folder (Secret
	// manifests such as the kubeconfig), repository-relative.
	Files []string `yaml:"-"`
}

// ClusterSpec says how to reach a cluster and what data templates get.
type ClusterSpec struct {
	Kubeconfig KubeconfigSource `yaml:"kubeconfig,omitempty"`
	// Paused clusters are left alone: nothing is applied, pruned or withdrawn.
	Paused bool `yaml:"paused,omitempty"`
	// Values is free per-cluster data for templates (.Cluster.Values).
	Values map[string]any `yaml:"values,omitempty"`
	// Decryption restricts which SOPS master keys may decrypt documents
	// rendered for this cluster (spec/decryption.go).
	Decryption *Decryption `yaml:"decryption,omitempty"`
	// Namespaces, when set, makes the entry namespace-scoped, as the
	// namespaces of an Argo CD cluster Secret: the kubeconfig's
	// credentials reach only these namespaces. regatta keeps the entry's
	// inventories in the first one, watches, classifies and prunes only
	// inside them, and refuses cluster-scoped objects and objects of other
	// namespaces (spec/cluster_scope.go). Empty: the whole cluster.
	Namespaces []string `yaml:"namespaces,omitempty"`
}

// KubeconfigSource says how regatta reaches a cluster: the Secret holding
// its kubeconfig (optionally with a ServiceAccount token that regatta
// renews), or a cloud provider whose workload identity signs short-lived
// tokens (spec/credentials.go).
type KubeconfigSource struct {
	SecretRef SecretKeyRef `yaml:"secretRef,omitempty"`
	// RenewToken, with a secretRef, makes regatta replace the kubeconfig's
	// ServiceAccount token with fresh bound tokens before they expire.
	RenewToken *TokenRenewal `yaml:"renewToken,omitempty"`
	// Cloud, instead of a secretRef, reaches the cluster with tokens of
	// the cloud identity of regatta's pod.
	Cloud *CloudCredentials `yaml:"cloud,omitempty"`
}

// SecretKeyRef names one key of one Secret. Defaults follow Cluster API:
// name <cluster>-kubeconfig, key value, namespace regatta-system.
type SecretKeyRef struct {
	Name      string `yaml:"name,omitempty"`
	Namespace string `yaml:"namespace,omitempty"`
	Key       string `yaml:"key,omitempty"`
}

// Profile says what to deploy on which clusters, in which order:
// profiles/<name>.yaml.
type Profile struct {
	TypeMeta `yaml:",inline"`
	Metadata ObjectMeta  `yaml:"metadata"`
	Spec     ProfileSpec `yaml:"spec"`

	Source Source `yaml:"-"`
	// selector is Spec.ClusterSelector compiled by Load (for an event
	// profile, the selector of its destinations: see checkEventTrigger).
	selector labels.Selector
	// ownSelector is Spec.ClusterSelector compiled by Load.
	ownSelector labels.Selector
	// tenant is the tenant whose folder holds the profile, or nil.
	tenant *Tenant
}

// Sync modes of a profile.
const (
	SyncModeOneTime                      = "OneTime"
	SyncModeContinuous                   = "Continuous"
	SyncModeContinuousWithDriftDetection = "ContinuousWithDriftDetection"
	SyncModeDryRun                       = "DryRun"
)

// Stop-matching behaviours of a profile.
const (
	StopMatchingWithdrawPolicies = "WithdrawPolicies"
	StopMatchingLeavePolicies    = "LeavePolicies"
)

// DefaultTier is the tier of a profile that sets none.
const DefaultTier = 100

// ProfileSpec is the body of a Profile.
type ProfileSpec struct {
	ClusterSelector      LabelSelector    `yaml:"clusterSelector,omitempty"`
	ClusterRefs          []string         `yaml:"clusterRefs,omitempty"`
	SyncMode             string           `yaml:"syncMode,omitempty"`
	DependsOn            []string         `yaml:"dependsOn,omitempty"`
	Tier                 *int             `yaml:"tier,omitempty"`
	StopMatchingBehavior string           `yaml:"stopMatchingBehavior,omitempty"`
	ContinueOnError      bool             `yaml:"continueOnError,omitempty"`
	HealthTimeout        string           `yaml:"healthTimeout,omitempty"`
	Addons               []Addon          `yaml:"addons"`
	Overlays             []Overlay        `yaml:"overlays,omitempty"`
	HealthChecks         []HealthCheck    `yaml:"healthChecks,omitempty"`
	DriftExclusions      []DriftExclusion `yaml:"driftExclusions,omitempty"`
	// EventTrigger makes the profile's add-ons event-driven (events/).
	EventTrigger *EventTrigger `yaml:"eventTrigger,omitempty"`
	// Rollout, when set, moves a change across the profile's clusters in
	// health-gated steps (spec/rollout.go).
	Rollout *Rollout `yaml:"rollout,omitempty"`
}

// Addon is one unit of a profile, rendered from exactly one source.
type Addon struct {
	Name      string           `yaml:"name"`
	Helm      *HelmSource      `yaml:"helm,omitempty"`
	Kustomize *KustomizeSource `yaml:"kustomize,omitempty"`
	Manifests *ManifestsSource `yaml:"manifests,omitempty"`
	Jsonnet   *JsonnetSource   `yaml:"jsonnet,omitempty"`
	Ytt       *YttSource       `yaml:"ytt,omitempty"`
	// OCI, when set, takes the add-on's files (the kustomize, manifests,
	// jsonnet or ytt paths) from an OCI artifact instead of the
	// repository: the paths are relative to the artifact's root.
	OCI *OCISource `yaml:"oci,omitempty"`
	// Template renders the add-on's manifests as Go templates with the
	// cluster's data before they are parsed.
	Template bool `yaml:"template,omitempty"`
	// Wait false applies the add-on without waiting for its health, as
	// Flux's wait: false; nil and true wait.
	Wait *bool `yaml:"wait,omitempty"`
	// PostBuild turns on Flux-style ${var} substitution of the rendered
	// manifests of a kustomize or manifests add-on.
	PostBuild *PostBuild `yaml:"postBuild,omitempty"`
}

// Waits reports whether the add-on's health is waited for.
func (a *Addon) Waits() bool { return a.Wait == nil || *a.Wait }

// PostBuild is Flux's Kustomization.spec.postBuild: variables substituted
// into the rendered manifests. The cluster's labels and top-level values
// are variables too; substituteFrom files override them in order, and
// substitute overrides all.
type PostBuild struct {
	Substitute     map[string]string `yaml:"substitute,omitempty"`
	SubstituteFrom []DataReference   `yaml:"substituteFrom,omitempty"`
}

// DataReference names a ConfigMap or Secret manifest in a file of the
// repository (SOPS-encrypted allowed) and, for Helm's valuesFrom, one key.
type DataReference struct {
	// Kind is ConfigMap or Secret.
	Kind string `yaml:"kind"`
	Name string `yaml:"name"`
	// Path is the repository file holding the manifest (multi-document
	// files allowed; the document of this kind and name is used).
	Path string `yaml:"path"`
	// ValuesKey is the data key holding Helm values (valuesFrom only);
	// default values.yaml.
	ValuesKey string `yaml:"valuesKey,omitempty"`
	// TargetPath sets the key's value, as a string, at this Helm --set
	// style path instead of merging it as YAML (valuesFrom only).
	TargetPath string `yaml:"targetPath,omitempty"`
	// Optional tolerates a missing file, object or key.
	Optional bool `yaml:"optional,omitempty"`
}

// HelmTest runs the chart's test hooks after its release, when enabled.
type HelmTest struct {
	Enable bool `yaml:"enable"`
}

// HelmSource is a Helm chart from a chart repository, an OCI registry or a
// folder of the fleet repository.
type HelmSource struct {
	// RepositoryURL is an http(s):// chart repository or an oci:// registry.
	RepositoryURL string `yaml:"repositoryURL,omitempty"`
	// Path is a chart folder inside the fleet repository, instead of RepositoryURL.
	Path             string         `yaml:"path,omitempty"`
	ChartName        string         `yaml:"chartName,omitempty"`
	ChartVersion     string         `yaml:"chartVersion,omitempty"`
	ReleaseName      string         `yaml:"releaseName,omitempty"`
	ReleaseNamespace string         `yaml:"releaseNamespace,omitempty"`
	Values           map[string]any `yaml:"values,omitempty"`
	ValuesFiles      []string       `yaml:"valuesFiles,omitempty"`
	// ValuesFrom are ConfigMap or Secret manifests of the repository whose
	// values are layered after valuesFiles and before values.
	ValuesFrom []DataReference `yaml:"valuesFrom,omitempty"`
	// Test applies the chart's test hooks after the release.
	Test *HelmTest `yaml:"test,omitempty"`
	// CreateNamespace creates the release namespace before the chart's
	// objects when it does not exist, as Helm's --create-namespace,
	// Sveltos' installOptions.createNamespace and Flux's
	// install.createNamespace (spec/namespace.go). Default false.
	CreateNamespace bool `yaml:"createNamespace,omitempty"`
}

// KustomizeSource is a kustomization folder of the fleet repository.
type KustomizeSource struct {
	Path            string  `yaml:"path"`
	TargetNamespace string  `yaml:"targetNamespace,omitempty"`
	Patches         []Patch `yaml:"patches,omitempty"`
}

// ManifestsSource is a folder of plain YAML or JSON manifests.
type ManifestsSource struct {
	Path string `yaml:"path"`
}

// JsonnetSource is a Jsonnet program of the fleet repository, evaluated
// as `jsonnet -J <jpath>... --ext-str ... --tla-str ... <path>` does. The
// program sees the cluster's data as std.extVar('regatta').
type JsonnetSource struct {
	// Path is the main file (templated, as a kustomize path).
	Path string `yaml:"path"`
	// JPath are library folders of the repository, searched after the
	// importing file's folder, the last first (the CLI's -J): a
	// jsonnet-bundler project lists its vendor folder.
	JPath []string `yaml:"jpath,omitempty"`
	// ExtVars are external variables as strings (--ext-str), ExtCode as
	// Jsonnet code (--ext-code).
	ExtVars map[string]string `yaml:"extVars,omitempty"`
	ExtCode map[string]string `yaml:"extCode,omitempty"`
	// TLAs are top-level arguments as strings (--tla-str), TLACode as
	// Jsonnet code (--tla-code), for a program that is a function.
	TLAs    map[string]string `yaml:"tlas,omitempty"`
	TLACode map[string]string `yaml:"tlaCode,omitempty"`
}

// YttSource is a set of Carvel ytt files of the fleet repository
// (templates, overlays, schemas, data values, Starlark modules), rendered
// as `ytt -f <path>... --data-values-file <file>...` does. The templates
// see the cluster's data as data.values.regatta.
type YttSource struct {
	// Paths are files and folders, each a -f of the CLI, in order.
	Paths []string `yaml:"paths"`
	// ValuesFiles are plain YAML data-values files or folders
	// (--data-values-file), in order.
	ValuesFiles []string `yaml:"valuesFiles,omitempty"`
	// Values are data values set after ValuesFiles, one
	// --data-value-yaml per top-level key.
	Values map[string]any `yaml:"values,omitempty"`
}

// OCISource is an OCI artifact (Flux's format, or a single-layer tar.gz)
// selected by exactly one of tag, semver (a range over the tags) or
// digest.
type OCISource struct {
	// URL is oci://registry/repository.
	URL    string `yaml:"url"`
	Tag    string `yaml:"tag,omitempty"`
	Semver string `yaml:"semver,omitempty"`
	Digest string `yaml:"digest,omitempty"`
	// Interval is how often a tag or semver range is resolved again (a Go
	// duration, as Flux's OCIRepository spec.interval); empty is one
	// minute. A digest never moves.
	Interval string `yaml:"interval,omitempty"`
	// SecretRef names a kubernetes.io/dockerconfigjson Secret manifest
	// of the repository (SOPS-encrypted as a rule) whose
	// .dockerconfigjson logs in to the registry.
	SecretRef *OCISecretRef `yaml:"secretRef,omitempty"`
	// Verify requires a cosign signature of the resolved digest.
	Verify *OCIVerify `yaml:"verify,omitempty"`
}

// OCIVerify is the cosign public key an OCI artifact must be signed with:
// inline (PEM) or in a Secret manifest of the repository (its keys ending
// in .pub, as Flux reads them).
type OCIVerify struct {
	PublicKey          string        `yaml:"publicKey,omitempty"`
	PublicKeySecretRef *OCISecretRef `yaml:"publicKeySecretRef,omitempty"`
}

// OCISecretRef is a Secret manifest in a repository file.
type OCISecretRef struct {
	Name string `yaml:"name"`
	Path string `yaml:"path"`
}

// Patch is a strategic-merge or JSON 6902 patch with an optional target,
// as in Flux's Kustomization.spec.patches.
type Patch struct {
	Patch  string         `yaml:"patch"`
	Target *PatchSelector `yaml:"target,omitempty"`
}

// PatchSelector selects the objects a patch applies to.
type PatchSelector struct {
	Group              string `yaml:"group,omitempty"`
	Version            string `yaml:"version,omitempty"`
	Kind               string `yaml:"kind,omitempty"`
	Name               string `yaml:"name,omitempty"`
	Namespace          string `yaml:"namespace,omitempty"`
	LabelSelector      string `yaml:"labelSelector,omitempty"`
	AnnotationSelector string `yaml:"annotationSelector,omitempty"`
}

// Overlay customises one add-on for the clusters its selector matches.
// The first matching overlay of an add-on wins.
type Overlay struct {
	Name            string         `yaml:"name,omitempty"`
	ClusterSelector LabelSelector  `yaml:"clusterSelector"`
	Addon           string         `yaml:"addon"`
	Values          map[string]any `yaml:"values,omitempty"`
	Patches         []Patch        `yaml:"patches,omitempty"`
	// Path replaces the add-on's kustomize or manifests path, or its Jsonnet main file.
	Path string `yaml:"path,omitempty"`
}

// HealthCheck gives a Lua health script for one group/kind.
type HealthCheck struct {
	Group  string `yaml:"group,omitempty"`
	Kind   string `yaml:"kind"`
	Script string `yaml:"script,omitempty"`
	// ScriptFile is a repository path to the script, instead of Script.
	ScriptFile string `yaml:"scriptFile,omitempty"`
}

// DriftExclusion lists JSON pointers that drift detection ignores on the
// objects its target selects.
type DriftExclusion struct {
	Target *PatchSelector `yaml:"target,omitempty"`
	Paths  []string       `yaml:"paths"`
}

// LabelSelector is a standard Kubernetes label selector.
type LabelSelector struct {
	MatchLabels      map[string]string          `yaml:"matchLabels,omitempty"`
	MatchExpressions []LabelSelectorRequirement `yaml:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is one expression of a LabelSelector.
type LabelSelectorRequirement struct {
	Key      string   `yaml:"key"`
	Operator string   `yaml:"operator"`
	Values   []string `yaml:"values,omitempty"`
}

// Classifier derives cluster labels from live cluster state:
// classifiers/<name>.yaml.
type Classifier struct {
	TypeMeta `yaml:",inline"`
	Metadata ObjectMeta     `yaml:"metadata"`
	Spec     ClassifierSpec `yaml:"spec"`

	Source Source `yaml:"-"`
}

// ClassifierSpec is the body of a Classifier. A cluster matches when every
// constraint given holds.
type ClassifierSpec struct {
	ClassifierLabels             map[string]string           `yaml:"classifierLabels"`
	KubernetesVersionConstraints []VersionConstraint         `yaml:"kubernetesVersionConstraints,omitempty"`
	DeployedResourceConstraint   *DeployedResourceConstraint `yaml:"deployedResourceConstraint,omitempty"`
}

// Version comparisons of a VersionConstraint.
const (
	CompareEqual                = "Equal"
	CompareNotEqual             = "NotEqual"
	CompareGreaterThan          = "GreaterThan"
	CompareGreaterThanOrEqualTo = "GreaterThanOrEqualTo"
	CompareLessThan             = "LessThan"
	CompareLessThanOrEqualTo    = "LessThanOrEqualTo"
)

// VersionConstraint compares the cluster's Kubernetes version with Version.
type VersionConstraint struct {
	Comparison string `yaml:"comparison"`
	Version    string `yaml:"version"`
}

// DeployedResourceConstraint matches clusters by the objects they hold.
type DeployedResourceConstraint struct {
	ResourceSelectors []ResourceSelector `yaml:"resourceSelectors"`
	// AggregatedClassification is a Lua script whose evaluate() sees every
	// selected object in the global `resources`.
	AggregatedClassification string `yaml:"aggregatedClassification,omitempty"`
}

// ResourceSelector selects objects of one kind on a cluster.
type ResourceSelector struct {
	Group        string        `yaml:"group"`
	Version      string        `yaml:"version"`
	Kind         string        `yaml:"kind"`
	Namespace    string        `yaml:"namespace,omitempty"`
	LabelFilters []LabelFilter `yaml:"labelFilters,omitempty"`
	// Evaluate is a Lua script whose evaluate() sees one object as `obj`.
	Evaluate string `yaml:"evaluate,omitempty"`
}

// Label filter operations.
const (
	LabelFilterEqual     = "Equal"
	LabelFilterDifferent = "Different"
)

// LabelFilter compares one label of a selected object.
type LabelFilter struct {
	Key       string `yaml:"key"`
	Operation string `yaml:"operation"`
	Value     string `yaml:"value"`
}

// Source locates a loaded document for error messages.
type Source struct {
	// File is the repository-relative, slash-separated path.
	File string
	// Line is the line of the document's first key.
	Line int
	// lines maps field paths to their lines in File.
	lines map[string]int
}

// LineOf returns the line of a field path such as "spec.addons[1].name",
// falling back to the closest enclosing field that has one.
func (s Source) LineOf(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := s.lines[p]; ok {
			return l
		}
	}
	return s.Line
}
