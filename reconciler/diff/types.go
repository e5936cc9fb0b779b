package diff

import "github.com/regatta-dev/regatta/reconciler/status"

// SchemaVersion identifies the JSON form of a Report. Fields may be added
// within a version; none is renamed or removed.
const SchemaVersion = "regatta.dev/plan/v1"

// Report is what merging head over base does to the fleet. It is written
// as JSON as it is (see docs/review.md for the schema).
type Report struct {
	SchemaVersion string  `json:"schemaVersion"`
	Base          Rev     `json:"base"`
	Head          Rev     `json:"head"`
	Facts         Facts   `json:"facts"`
	Summary       Summary `json:"summary"`
	// Errors in the head revision: validation or render failures. Any
	// error makes the plan fail (exit 1).
	Errors   []Problem `json:"errors"`
	Warnings []Warning `json:"warnings"`
	// Groups hold the changes, one group per set of clusters with
	// identical changes, ordered by their first cluster.
	Groups []Group `json:"groups"`
	// Rollouts are the stages the change goes through, for the profiles
	// with spec.rollout it affects.
	Rollouts []RolloutPlan `json:"rollouts,omitempty"`
	// Tenants are the changes by owner of their profiles, the platform
	// ("") first, when the repository has tenants.
	Tenants []TenantChanges `json:"tenants,omitempty"`
	// Live is the comparison with the clusters (--live only).
	Live *LiveReport `json:"live,omitempty"`
	// Renders counts the renders the comparison asked for.
	Renders RenderStats `json:"renders"`
	// Signature is the signature check of head against base
	// (--verify-commits): whether regatta would let it in, by which key.
	Signature *Signature `json:"signature,omitempty"`
}

// Signature is the verdict of the signature check of the head revision,
// as the daemon would give it with base as the last verified revision.
type Signature struct {
	Mode     string `json:"mode"`
	Accepted bool   `json:"accepted"`
	// Commit is the refused commit, or head.
	Commit string `json:"commit"`
	Key    string `json:"key,omitempty"`
	Signer string `json:"signer,omitempty"`
	Reason string `json:"reason,omitempty"`
	File   string `json:"file,omitempty"`
	// Message says why, for people.
	Message string `json:"message,omitempty"`
}

// RenderStats counts the (cluster, profile) renders of a comparison, both
// revisions: Run were computed, Shared were served by the render cache
// (another cluster's render with the same inputs, or a concurrent one).
// Many runs for few distinct outputs mean templates that read
// per-cluster data (see docs/format.md, Templates).
type RenderStats struct {
	Run    uint64 `json:"run"`
	Shared uint64 `json:"shared"`
}

// Rev names one side of the comparison.
type Rev struct {
	// Ref is the revision as given (origin/main, HEAD).
	Ref string `json:"ref"`
	// Revision is the commit SHA it resolved to.
	Revision string `json:"revision"`
}

// Sources of cluster facts.
const (
	FactsStatusBranch = "status-branch"
	FactsFlags        = "flags"
)

// Facts says where the cluster facts (Kubernetes version, classifier
// labels) came from.
type Facts struct {
	// Source is FactsStatusBranch or FactsFlags.
	Source         string `json:"source"`
	StatusBranch   string `json:"statusBranch,omitempty"`
	StatusRevision string `json:"statusRevision,omitempty"`
	// KubernetesVersion is the version assumed for clusters without status.
	KubernetesVersion string `json:"kubernetesVersion"`
	// WithoutStatus lists the clusters the status branch has no facts for.
	WithoutStatus []string `json:"withoutStatus,omitempty"`
	Notes         []string `json:"notes,omitempty"`
}

// Summary counts the changes; object counts are over every cluster.
type Summary struct {
	// Clusters is the number of clusters at head.
	Clusters         int  `json:"clusters"`
	ClustersAffected int  `json:"clustersAffected"`
	ClustersAdded    int  `json:"clustersAdded"`
	ClustersRemoved  int  `json:"clustersRemoved"`
	ProfilesGained   int  `json:"profilesGained"`
	ProfilesLost     int  `json:"profilesLost"`
	Created          int  `json:"created"`
	Updated          int  `json:"updated"`
	Deleted          int  `json:"deleted"`
	Released         int  `json:"released"`
	Changed          bool `json:"changed"`
}

// Problem is an error in the head revision, with the clusters it hits.
type Problem struct {
	// Text is the message exactly as `regatta validate` or `regatta
	// render` print it: file:line: field: message.
	Text    string `json:"text"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Field   string `json:"field,omitempty"`
	Profile string `json:"profile,omitempty"`
	Addon   string `json:"addon,omitempty"`
	// Clusters the failure hits (render failures only).
	Clusters []string `json:"clusters,omitempty"`
}

// Kinds of a Warning.
const (
	WarnDeleteNamespace  = "delete-namespace"
	WarnDeleteCRD        = "delete-crd"
	WarnSelectsNothing   = "selects-nothing"
	WarnManyClusters     = "many-clusters"
	WarnBaseRender       = "base-render-failed"
	WarnBaseInvalid      = "base-invalid"
	WarnRepository       = "repository"
	WarnFactsUnavailable = "facts"
)

// Warning is a risky change or a limit of the comparison.
type Warning struct {
	Kind     string   `json:"kind"`
	Message  string   `json:"message"`
	Clusters []string `json:"clusters,omitempty"`
}

// Cluster-level changes of a Group.
const (
	ClusterAdded   = "added"
	ClusterRemoved = "removed"
)

// Group is a set of clusters whose changes are identical.
type Group struct {
	// ID is a digest of the changes: equal IDs, equal changes.
	ID       string   `json:"id"`
	Clusters []string `json:"clusters"`
	// Change is ClusterAdded, ClusterRemoved or empty.
	Change   string          `json:"change,omitempty"`
	Notes    []string        `json:"notes,omitempty"`
	Profiles []ProfileChange `json:"profiles"`
}

// Profile-level changes of a ProfileChange.
const (
	ProfileGained  = "gained"
	ProfileLost    = "lost"
	ProfileUpdated = "updated"
)

// ProfileChange is what changes for one profile on the group's clusters.
type ProfileChange struct {
	Profile string `json:"profile"`
	// Change is ProfileGained, ProfileLost or ProfileUpdated.
	Change  string         `json:"change"`
	Reasons []Reason       `json:"reasons,omitempty"`
	Notes   []string       `json:"notes,omitempty"`
	Counts  Counts         `json:"counts"`
	Objects []ObjectChange `json:"objects"`
	// Instances are, for an event profile, the instances recorded in the
	// status branch that change, each re-rendered at both revisions from
	// its recorded resource; Objects then holds all their objects.
	Instances []InstanceChange `json:"instances,omitempty"`
	// Artifacts are the OCI artifacts the head rendering read, with the
	// digests their selectors resolve to now.
	Artifacts []status.Artifact `json:"artifacts,omitempty"`
}

// InstanceChange is what a change does to one recorded instance of an
// event profile.
type InstanceChange struct {
	Name          string `json:"name"`
	SourceCluster string `json:"sourceCluster"`
	// Resource is the instance's resource (Kind/namespace/name) or how
	// many resources an instance for all of them has.
	Resource string         `json:"resource"`
	Notes    []string       `json:"notes,omitempty"`
	Counts   Counts         `json:"counts"`
	Objects  []ObjectChange `json:"objects"`
}

// Kinds of a Reason.
const (
	ReasonClusterAdded    = "cluster-added"
	ReasonClusterRemoved  = "cluster-removed"
	ReasonProfileAdded    = "profile-added"
	ReasonProfileRemoved  = "profile-removed"
	ReasonSelectorChanged = "selector-changed"
	ReasonRefsChanged     = "cluster-refs-changed"
	ReasonLabelChanged    = "label-changed"
)

// Reason explains why a cluster gains or loses a profile.
type Reason struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Label, From and To describe a label-changed reason; an absent label
	// has the value "" and Present false.
	Label string `json:"label,omitempty"`
	From  *Value `json:"from,omitempty"`
	To    *Value `json:"to,omitempty"`
}

// Value is a label value that may be absent.
type Value struct {
	Value   string `json:"value"`
	Present bool   `json:"present"`
}

// Counts tallies object changes.
type Counts struct {
	Created  int `json:"created"`
	Updated  int `json:"updated"`
	Deleted  int `json:"deleted"`
	Released int `json:"released"`
}

func (c *Counts) add(o Counts) {
	c.Created += o.Created
	c.Updated += o.Updated
	c.Deleted += o.Deleted
	c.Released += o.Released
}

// Actions of an ObjectChange.
const (
	ActionCreated = "created"
	ActionUpdated = "updated"
	ActionDeleted = "deleted"
	// ActionReleased: the profile stops matching with LeavePolicies, so
	// the object stays in the cluster without regatta's labels.
	ActionReleased = "released"
)

// ObjectChange is one object that changes.
type ObjectChange struct {
	Action     string `json:"action"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	Addon      string `json:"addon,omitempty"`
	// Diff is a unified diff (base → head, YAML) of an updated object,
	// with Secret values redacted.
	Diff string `json:"diff,omitempty"`
	// RedactedKeys are the redacted fields whose values changed, such as
	// data.password of a Secret.
	RedactedKeys []string `json:"redactedKeys,omitempty"`
	Message      string   `json:"message,omitempty"`
	// keepsContents: spec.KeptWhileNotEmpty, for a Namespace regatta
	// deletes only while nothing else is in it.
	keepsContents bool
}

// Ref formats the object as Kind/namespace/name (Kind/name when
// cluster-scoped).
func (o ObjectChange) Ref() string {
	if o.Namespace == "" {
		return o.Kind + "/" + o.Name
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}
