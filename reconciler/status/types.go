// Package status turns the results of a pass into the status files regatta
// commits back into the fleet repository — status/clusters/<name>.yaml per
// cluster and status/README.md, a fleet dashboard — and reads them back for
// `regatta status` and `regatta plan`. The files are a user-facing contract:
// they are versioned by apiVersion and hold nothing that changes on every
// pass (no timestamps), so a pass that changes nothing commits nothing.
package status

import "strings"

// APIVersion and Kind of a cluster status file.
const (
	APIVersion        = "regatta.dev/v1alpha1"
	KindClusterStatus = "ClusterStatus"
)

// Layout of the status tree, relative to the status root.
const (
	Dir         = "status"
	ClustersDir = "status/clusters"
	Dashboard   = "status/README.md"
)

// ClusterStatus is the content of status/clusters/<name>.yaml.
type ClusterStatus struct {
	APIVersion string `json:"apiVersion" yaml:"apiVersion"`
	Kind       string `json:"kind" yaml:"kind"`
	Cluster    string `json:"cluster" yaml:"cluster"`
	// SourceRevision is the fleet repository commit the cluster was last
	// reconciled against.
	SourceRevision string `json:"sourceRevision" yaml:"sourceRevision"`
	// Owner is the replica that reconciles the cluster, when replicas
	// share the fleet (regatta run --replicas-mode shard).
	Owner string `json:"owner,omitempty" yaml:"owner,omitempty"`
	// Mode is "pull" for a cluster reconciled by its own agent (the
	// record comes from the agent's status ref); empty for push.
	Mode string `json:"mode,omitempty" yaml:"mode,omitempty"`
	// Handover is the writer of this file's side of the handshake that
	// keeps the central daemon and a cluster's agent from both writing to
	// the cluster across a change of spec.mode (reconciler/agent).
	Handover *Handover `json:"handover,omitempty" yaml:"handover,omitempty"`
	// Generation counts the writes of this record on the status branch:
	// each write is its parent commit's plus one (NextRecord), so a record
	// never goes back to an older write.
	Generation int64 `json:"generation,omitempty" yaml:"generation,omitempty"`
	Paused     bool  `json:"paused,omitempty" yaml:"paused,omitempty"`
	Reachable  bool  `json:"reachable" yaml:"reachable"`
	// Error says why the cluster could not be reached or read.
	Error             string `json:"error,omitempty" yaml:"error,omitempty"`
	KubernetesVersion string `json:"kubernetesVersion,omitempty" yaml:"kubernetesVersion,omitempty"`
	// Labels are the effective labels: cluster.yaml's and classifiers'.
	Labels map[string]string `json:"labels,omitempty" yaml:"labels,omitempty"`
	// ClassifierLabels are the labels classifiers gave, by classifier.
	ClassifierLabels map[string]map[string]string `json:"classifierLabels,omitempty" yaml:"classifierLabels,omitempty"`
	// ClassifierLabelsStale is set when the cluster was unreachable and its
	// last known classifier labels were kept.
	ClassifierLabelsStale bool        `json:"classifierLabelsStale,omitempty" yaml:"classifierLabelsStale,omitempty"`
	LabelNotes            []LabelNote `json:"labelNotes,omitempty" yaml:"labelNotes,omitempty"`
	// ClassifierErrors are the classifiers that failed in the last pass
	// (each keeps its last result), with script, line and error.
	ClassifierErrors []ClassifierError `json:"classifierErrors,omitempty" yaml:"classifierErrors,omitempty"`
	Profiles         []Profile         `json:"profiles,omitempty" yaml:"profiles,omitempty"`
	// HealthChecks are the outcomes of the alerts' Lua health checks that
	// select the cluster, in the last pass it was reached (added within
	// the format; absent without such alerts and in records written
	// before).
	HealthChecks []HealthCheck `json:"healthChecks,omitempty" yaml:"healthChecks,omitempty"`
}

// Handover is one side's turn in the handshake between the central
// daemon and a cluster's agent: turns count the handovers of the cluster,
// the central daemon holds the even ones and the agent the odd ones, and
// the turn in force is the larger of the two sides' (docs/operations.md,
// "Switching a cluster between push and pull").
type Handover struct {
	Turn int64 `json:"turn" yaml:"turn"`
	// Revision is the followed branch's revision at which this side took
	// or handed over the turn.
	Revision string `json:"revision,omitempty" yaml:"revision,omitempty"`
	// By is who recorded it by hand (regatta release-agent); empty for
	// regatta's own processes.
	By string `json:"by,omitempty" yaml:"by,omitempty"`
}

// ClassifierError is a classifier that could not be evaluated.
type ClassifierError struct {
	Classifier string `json:"classifier" yaml:"classifier"`
	Message    string `json:"message" yaml:"message"`
}

// LabelNote explains a classifier label that did not take effect.
type LabelNote struct {
	Key     string `json:"key" yaml:"key"`
	Reason  string `json:"reason" yaml:"reason"`
	Message string `json:"message" yaml:"message"`
}

// Profile is the result record of one (profile, cluster) pair.
type Profile struct {
	Name string `json:"name" yaml:"name"`
	// Tenant is the tenant the profile belongs to; empty for the platform.
	Tenant string `json:"tenant,omitempty" yaml:"tenant,omitempty"`
	State  string `json:"state" yaml:"state"`
	// Revision is the fleet repository commit whose rendering is applied.
	Revision   string `json:"revision,omitempty" yaml:"revision,omitempty"`
	RenderHash string `json:"renderHash,omitempty" yaml:"renderHash,omitempty"`
	// Objects is how many objects the pair manages.
	Objects int    `json:"objects" yaml:"objects"`
	Health  string `json:"health,omitempty" yaml:"health,omitempty"`
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
	// Error is the first error, with its object and cause.
	Error *Error `json:"error,omitempty" yaml:"error,omitempty"`
	// DriftCorrections counts the drift regatta has corrected for the pair
	// since it was first applied.
	DriftCorrections int64 `json:"driftCorrections,omitempty" yaml:"driftCorrections,omitempty"`
	// Changes lists what a DryRun profile would do.
	Changes []Change `json:"changes,omitempty" yaml:"changes,omitempty"`
	// Rollout is where the pair stands in its profile's rollout.
	Rollout *PairRollout `json:"rollout,omitempty" yaml:"rollout,omitempty"`
	// EventInstances lists the instances of an event profile deployed on
	// the cluster.
	EventInstances []EventInstance `json:"eventInstances,omitempty" yaml:"eventInstances,omitempty"`
	// Artifacts are the OCI artifacts the pair's add-ons were read from,
	// with the digests their selectors resolved to, for the rendering of
	// RenderHash (added within the format; absent for pairs without OCI
	// sources and in records written before).
	Artifacts []Artifact `json:"artifacts,omitempty" yaml:"artifacts,omitempty"`
}

// Artifact is the OCI artifact an add-on was read from.
type Artifact struct {
	Addon  string `json:"addon" yaml:"addon"`
	URL    string `json:"url" yaml:"url"`
	Digest string `json:"digest" yaml:"digest"`
}

// ShortDigest abbreviates a digest as registries' UIs do:
// sha256:0123456789ab.
func ShortDigest(d string) string {
	algo, hex, ok := strings.Cut(d, ":")
	if !ok || len(hex) <= 12 {
		return d
	}
	return algo + ":" + hex[:12]
}

// EventInstance is one instance of an event profile: where its event
// happened, the resource (or how many resources) and the objects it made.
type EventInstance struct {
	Name          string   `json:"name" yaml:"name"`
	SourceCluster string   `json:"sourceCluster" yaml:"sourceCluster"`
	Resource      string   `json:"resource" yaml:"resource"`
	Objects       []string `json:"objects,omitempty" yaml:"objects,omitempty"`
	// Event is what the instance's templates were given, for `regatta
	// plan` to render the instance again (added with EventRecordFormat 1;
	// absent in records written before, which plan cannot re-render).
	Event *EventRecord `json:"event,omitempty" yaml:"event,omitempty"`
}

// EventRecordFormat is the version of EventRecord: a reader that finds a
// newer one does not trust its fields (fields are only ever added within a
// format).
const EventRecordFormat = 1

// EventRecord is an event instance's input as the status branch keeps it:
// the resource (or resources) the templates saw, minus what must not or
// need not be written into Git (see Omitted and docs/operations.md).
type EventRecord struct {
	Format int `json:"format" yaml:"format"`
	// RenderHash is the hash of the instance's rendering when it was
	// applied: plan tells by it whether the recorded resource still
	// reproduces what was deployed.
	RenderHash string `json:"renderHash" yaml:"renderHash"`
	// ResourceRef names the resource of a one-per-resource instance.
	ResourceRef *ResourceRef `json:"resourceRef,omitempty" yaml:"resourceRef,omitempty"`
	// Resource is that resource, reduced; Resources are the resources of
	// an instance for all of them, reduced.
	Resource  map[string]any   `json:"resource,omitempty" yaml:"resource,omitempty"`
	Resources []map[string]any `json:"resources,omitempty" yaml:"resources,omitempty"`
	// Omitted lists the fields left out of the recorded resources
	// (status, data, stringData, metadata.resourceVersion...), so that a
	// template reading one of them is explained rather than silently
	// rendered without it.
	Omitted []string `json:"omitted,omitempty" yaml:"omitted,omitempty"`
}

// ResourceRef identifies a resource of a source cluster.
type ResourceRef struct {
	APIVersion string `json:"apiVersion" yaml:"apiVersion"`
	Kind       string `json:"kind" yaml:"kind"`
	Namespace  string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	Name       string `json:"name" yaml:"name"`
}

// Error is a failure, placed at an object or a repository file when known.
type Error struct {
	Object  string `json:"object,omitempty" yaml:"object,omitempty"`
	File    string `json:"file,omitempty" yaml:"file,omitempty"`
	Line    int    `json:"line,omitempty" yaml:"line,omitempty"`
	Message string `json:"message" yaml:"message"`
}

// Change is one object a DryRun profile would create, update or delete.
type Change struct {
	Action string `json:"action" yaml:"action"`
	Object string `json:"object" yaml:"object"`
}

// Fleet is the content of status/fleet.yaml: the revisions seen and the
// errors that kept the newest one from taking effect.
type Fleet struct {
	APIVersion string `json:"apiVersion" yaml:"apiVersion"`
	Kind       string `json:"kind" yaml:"kind"`
	// SourceRevision is the newest revision of the followed branch.
	SourceRevision string `json:"sourceRevision" yaml:"sourceRevision"`
	// AppliedRevision is the newest revision that loaded and validated; it
	// is the one in force on the clusters.
	AppliedRevision string `json:"appliedRevision,omitempty" yaml:"appliedRevision,omitempty"`
	// Errors are why SourceRevision is not in force (file, line, field).
	Errors []Error `json:"errors,omitempty" yaml:"errors,omitempty"`
	// RefusedTenants are the tenants whose folders did not load at
	// SourceRevision: their profiles keep their last good state.
	RefusedTenants []RefusedTenant `json:"refusedTenants,omitempty" yaml:"refusedTenants,omitempty"`
	// Rollouts are the progressive rollouts of profiles with spec.rollout.
	Rollouts []RolloutStatus `json:"rollouts,omitempty" yaml:"rollouts,omitempty"`
	// DependsOn lists the profiles of the revision in force that depend
	// on others (spec.dependsOn), for the dashboard's graph.
	DependsOn []ProfileDependency `json:"dependsOn,omitempty" yaml:"dependsOn,omitempty"`
	// Verification is the signature check of SourceRevision, when
	// regatta runs with --verify-commits.
	Verification *Verification `json:"verification,omitempty" yaml:"verification,omitempty"`
}

// Verification is the verdict of the signature check of a revision: the
// commit it refused (or the revision it accepted), the signing key, and
// why it refused.
type Verification struct {
	Accepted bool `json:"accepted" yaml:"accepted"`
	// Mode is head or every (--verify-commits).
	Mode string `json:"mode" yaml:"mode"`
	// Base is the last verified revision the check started from ("": the
	// revision's own signature only).
	Base   string `json:"base,omitempty" yaml:"base,omitempty"`
	Commit string `json:"commit" yaml:"commit"`
	// Key is an OpenPGP fingerprint or an SSH key's SHA256 fingerprint;
	// Signer names it (user ID, principals).
	Key    string `json:"key,omitempty" yaml:"key,omitempty"`
	Signer string `json:"signer,omitempty" yaml:"signer,omitempty"`
	// Reason is why: Unsigned, UnknownKey, ExpiredKey, RevokedKey,
	// BadSignature, SignerNotAllowed or Unverifiable.
	Reason string `json:"reason,omitempty" yaml:"reason,omitempty"`
	// File is the path a signer may not change (SignerNotAllowed).
	File    string `json:"file,omitempty" yaml:"file,omitempty"`
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
}

// RefusedTenant is a tenant whose folder did not load, and why.
type RefusedTenant struct {
	Tenant string  `json:"tenant" yaml:"tenant"`
	Errors []Error `json:"errors" yaml:"errors"`
}

// ProfileDependency is one profile and the profiles it waits for.
type ProfileDependency struct {
	Profile   string   `json:"profile" yaml:"profile"`
	DependsOn []string `json:"dependsOn" yaml:"dependsOn"`
}

// KindFleetStatus is the kind of status/fleet.yaml.
const KindFleetStatus = "FleetStatus"

// FleetFile is the path of the fleet status file.
const FleetFile = "status/fleet.yaml"

// Snapshot is everything the status files hold.
type Snapshot struct {
	Fleet    Fleet
	Clusters []ClusterStatus
}
