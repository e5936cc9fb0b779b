package apply

import (
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fluxcd/pkg/ssa/normalize"

	"github.com/regatta-dev/regatta/spec"
)

// Labels and annotations regatta sets or honours on the objects it applies.
const (
	// LabelProfile names the profile that owns an object.
	LabelProfile = "regatta.dev/profile"
	// LabelAddon names the add-on that rendered an object.
	LabelAddon = "regatta.dev/addon"
	// LabelCluster names the fleet cluster the object was applied for.
	LabelCluster = "regatta.dev/cluster"
	// LabelTenant names the tenant whose profile owns an object; absent
	// on the platform's objects.
	LabelTenant = "regatta.dev/tenant"
	// AnnotationTier holds the owning profile's tier.
	AnnotationTier = "regatta.dev/tier"
	// AnnotationPrune set to "disabled" keeps an object from being deleted
	// by prune and withdrawal.
	AnnotationPrune = "regatta.dev/prune"
	// AnnotationDriftDetection set to "disabled" keeps drift detection from
	// correcting an object.
	AnnotationDriftDetection = "regatta.dev/drift-detection"
	// Disabled is the value of the opt-out annotations.
	Disabled = "disabled"
	// FieldManager is the server-side apply field manager.
	FieldManager = "regatta"
)

// Phase is the Helm hook phase of a step.
type Phase string

// Phases of a step: Helm pre-install/upgrade hooks, the release, post hooks.
const (
	PhasePre  Phase = "pre"
	PhaseMain Phase = "main"
	PhasePost Phase = "post"
)

// Step is one unit of a profile, applied and then waited for before the next:
// an add-on, or one hook phase and weight of a Helm add-on.
type Step struct {
	Addon  string
	Phase  Phase
	Weight int
	// NoWait applies the step without waiting for its health (an add-on's
	// wait: false); the next step goes on once it is applied.
	NoWait  bool
	Objects []*unstructured.Unstructured
	// Namespace is where objects without a namespace go when the cluster
	// serves their kind as namespaced (see placeInNamespace); "" leaves
	// them as they are.
	Namespace string
}

// Request asks to apply one profile's rendered objects to one cluster.
type Request struct {
	Profile string
	// Tier is the profile's tier; the lower tier wins a conflict. Nil
	// means spec.DefaultTier (0 is a tier: the highest).
	Tier       *int
	Revision   string
	RenderHash string
	// SyncMode is one of spec.SyncMode*; empty means Continuous.
	SyncMode string
	// StopMatchingBehavior is recorded in the inventory so a later Withdraw
	// without the profile (deleted from the repository) knows what to do.
	StopMatchingBehavior string
	ContinueOnError      bool
	// HealthTimeout bounds the health wait of each step; zero means
	// Options.HealthTimeout.
	HealthTimeout time.Duration
	// Steps in apply order.
	Steps           []Step
	DriftExclusions []spec.DriftExclusion
	// Health, when set, overrides kstatus for the kinds it knows.
	Health HealthChecker
	// Releasing names profiles the caller withdraws from this cluster in
	// the same pass, after this apply: an object one of them owns is taken
	// over whatever its tier, so a renamed or replacing profile inherits
	// the objects without a delete and re-create.
	Releasing []string
	// Listed says Inventory is the profile's inventory as Cluster.Inventories
	// listed it earlier in the same pass (nil: the profile has none), so
	// Apply does not read it again. Only the apply of this profile writes
	// its inventory, so one listing per cluster and pass serves them all.
	Listed    bool
	Inventory *Inventory
	// Async makes health checks non-blocking: a step that is applied but
	// not healthy yet ends the Apply as Progressing (Result.Waiting says
	// what it waits for) and the next Apply of the same render resumes at
	// that step, without re-applying the steps before it. The health
	// timeout runs from the step's first apply across Apply calls; once it
	// passed the pair is Failed. Manager.PollHealth says when to resume.
	Async bool
	// Stop, when set, is asked before each step; true ends the Apply there
	// as Progressing, with nothing pruned (a newer revision superseded the
	// request).
	Stop func() bool
	// Impersonate, when set, is the user (a tenant's ServiceAccount,
	// system:serviceaccount:ns:name) the objects are applied and pruned
	// as; inventories and reads stay regatta's own.
	Impersonate string
	// SkipUnchanged sends no request for the objects whose desired state
	// this Manager's previous, healthy pass of the profile applied as they
	// are (event profiles: see manager_unchanged.go).
	SkipUnchanged bool
	// Owner is the tenant the profile belongs to ("" for the platform).
	// Tiers and withdrawals take objects over only from profiles of the
	// same owner: a tenant never takes the platform's or another tenant's.
	Owner string
}

// releases reports whether profile is being withdrawn in this pass.
func (r Request) releases(profile string) bool {
	for _, p := range r.Releasing {
		if p == profile {
			return true
		}
	}
	return false
}

func (r Request) tier() int {
	if r.Tier == nil {
		return spec.DefaultTier
	}
	return *r.Tier
}

func (r Request) syncMode() string {
	if r.SyncMode == "" {
		return spec.SyncModeContinuous
	}
	return r.SyncMode
}

// detectsDrift reports whether the profile is ContinuousWithDriftDetection:
// its objects are watched (or checked at each drift interval) and restored.
func (r Request) detectsDrift() bool {
	return r.syncMode() == spec.SyncModeContinuousWithDriftDetection
}

// validate checks what the package relies on: the profile name is a label
// value and part of a ConfigMap name, every object is complete, and no
// object is rendered twice.
func (r Request) validate() error {
	if errs := validation.IsDNS1123Label(r.Profile); len(errs) > 0 {
		return fmt.Errorf("profile name %q: %s", r.Profile, errs[0])
	}
	switch r.syncMode() {
	case spec.SyncModeOneTime, spec.SyncModeContinuous, spec.SyncModeContinuousWithDriftDetection, spec.SyncModeDryRun:
	default:
		return fmt.Errorf("unknown sync mode %q", r.SyncMode)
	}
	if r.Inventory != nil && (!r.Listed || r.Inventory.Profile != r.Profile) {
		return fmt.Errorf("inventory of profile %q handed to the apply of %q (listed %v)", r.Inventory.Profile, r.Profile, r.Listed)
	}
	seen := map[ObjectRef]string{}
	for _, st := range r.Steps {
		if errs := validation.IsValidLabelValue(st.Addon); st.Addon == "" || len(errs) > 0 {
			return fmt.Errorf("add-on name %q is not a label value", st.Addon)
		}
		for _, obj := range st.Objects {
			if err := checkObject(st.Addon, obj, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkObject(addon string, obj *unstructured.Unstructured, seen map[ObjectRef]string) error {
	ref := RefOf(obj)
	if obj.GetAPIVersion() == "" || ref.Kind == "" || ref.Name == "" {
		return fmt.Errorf("add-on %s: object %s has no apiVersion, kind or name", addon, ref)
	}
	if prev, ok := seen[ref.key()]; ok {
		return fmt.Errorf("%s is rendered twice (add-ons %s and %s)", ref, prev, addon)
	}
	seen[ref.key()] = addon
	return nil
}

// desired is one object as it will be applied, with the add-on it belongs to.
type desired struct {
	addon string
	obj   *unstructured.Unstructured
}

// prepare copies the step's objects, normalises them as ssa expects and sets
// the ownership labels and the tier annotation.
func (r Request) prepare(cluster string, f Fleet, st Step) ([]desired, error) {
	out := make([]desired, 0, len(st.Objects))
	for _, o := range st.Objects {
		obj := o.DeepCopy()
		if err := normalize.Unstructured(obj); err != nil {
			return nil, &ObjectError{Object: RefOf(o), Op: "normalize", Err: err}
		}
		setOwnership(obj, r.Profile, st.Addon, cluster, r.tier())
		setTenant(obj, r.Owner)
		f.label(obj)
		out = append(out, desired{addon: st.Addon, obj: obj})
	}
	return out, nil
}

func setOwnership(obj *unstructured.Unstructured, profile, addon, cluster string, tier int) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelProfile] = profile
	labels[LabelAddon] = addon
	labels[LabelCluster] = cluster
	obj.SetLabels(labels)
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationTier] = strconv.Itoa(tier)
	obj.SetAnnotations(ann)
}

// setTenant labels an object with its owning tenant, and removes a label
// the manifest may carry on the platform's objects.
func setTenant(obj *unstructured.Unstructured, tenant string) {
	labels := obj.GetLabels()
	if tenant == "" {
		delete(labels, LabelTenant)
	} else {
		labels[LabelTenant] = tenant
	}
	obj.SetLabels(labels)
}

// tierOf reads the tier annotation of an object, spec.DefaultTier when absent
// or malformed.
func tierOf(ann map[string]string) int {
	if t, err := strconv.Atoi(ann[AnnotationTier]); err == nil {
		return t
	}
	return spec.DefaultTier
}
