package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/regatta-dev/regatta/spec"
)

// releasePatch removes regatta's ownership labels and tier annotation.
var releasePatch = []byte(fmt.Sprintf(
	`{"metadata":{"labels":{%q:null,%q:null,%q:null,%q:null,%q:null},"annotations":{%q:null}}}`,
	LabelProfile, LabelAddon, LabelCluster, LabelFleet, LabelTenant, AnnotationTier))

// Withdraw removes a profile from the cluster when the cluster stops matching
// it. behavior is spec.StopMatchingWithdrawPolicies (delete every inventoried
// object, then the inventory) or spec.StopMatchingLeavePolicies (drop the
// ownership labels, delete the inventory, delete no object); empty means the
// behaviour recorded in the inventory, else WithdrawPolicies. Objects that
// failed to delete or release stay in the inventory, and the Result is
// Failed; a profile without inventory is Withdrawn at once.
func (c *Cluster) Withdraw(ctx context.Context, profile, behavior string) (res Result) {
	start := time.Now()
	res = Result{Cluster: c.name, Profile: profile}
	if errs := validation.IsDNS1123Label(profile); len(errs) > 0 {
		res.fail(fmt.Errorf("profile name %q: %s", profile, errs[0]))
		return res
	}
	defer c.lockProfile(profile)()
	c.untrackDrift(profile)
	c.stopAwaiting(profile)
	cl := c.currentClient()
	inv, err := readInventory(ctx, cl.Kube, c.fleet(), profile)
	if err != nil {
		res.fail(unreachable(ctx, c.name, err))
		return res
	}
	if inv != nil {
		res.Revision, res.RenderHash = inv.Revision, inv.RenderHash
		c.withdraw(ctx, cl, inv, withdrawBehavior(behavior, inv), &res)
	} else {
		res.State = StateWithdrawn
	}
	if res.State == StateWithdrawn {
		c.setState(profile, nil)
	}
	res.Duration = time.Since(start)
	c.log().Info("withdraw", "profile", profile, "state", res.State, "deleted", res.Counts.Deleted, "error", res.Error)
	return res
}

func withdrawBehavior(behavior string, inv *Inventory) string {
	switch {
	case behavior != "":
		return behavior
	case inv.StopMatchingBehavior != "":
		return inv.StopMatchingBehavior
	}
	return spec.StopMatchingWithdrawPolicies
}

// writerOf is the client a pair's objects are deleted with: cl, or cl
// impersonating the user its inventory names (a tenant's ServiceAccount).
func writerOf(cl *Client, user string) (*Client, error) {
	if user == "" {
		return cl, nil
	}
	return cl.As(user)
}

func (c *Cluster) withdraw(ctx context.Context, cl *Client, inv *Inventory, behavior string, res *Result) {
	w, err := writerOf(cl, inv.Impersonate)
	if err != nil {
		res.fail(fmt.Errorf("cluster %s: %w", c.name, err))
		return
	}
	pr := newPruner(c, cl, w, inv.Profile)
	var kept []InventoryEntry
	switch behavior {
	case spec.StopMatchingWithdrawPolicies:
		kept, err = pr.prune(ctx, inv.Objects, res.record)
	case spec.StopMatchingLeavePolicies:
		kept, err = pr.release(ctx, inv.Objects, res.record)
	default:
		res.fail(fmt.Errorf("unknown stop-matching behavior %q", behavior))
		return
	}
	if len(kept) > 0 {
		inv.Objects, inv.Complete = kept, false
		if werr := writeInventory(ctx, cl.Kube, c.fleet(), inv, &c.inventories); werr != nil {
			err = errors.Join(err, werr)
		}
		res.fail(unreachable(ctx, c.name, err))
		return
	}
	if err = errors.Join(err, deleteInventory(ctx, cl.Kube, c.fleet(), inv.Profile)); err != nil {
		res.fail(unreachable(ctx, c.name, err))
		return
	}
	res.State = StateWithdrawn
}

// release removes the ownership labels from every entry this profile still
// owns, and returns the entries that failed.
func (pr *pruner) release(ctx context.Context, entries []InventoryEntry, record func(ObjectChange)) ([]InventoryEntry, error) {
	var kept []InventoryEntry
	var errs []error
	for _, e := range entries {
		ch, err := pr.release1(ctx, e)
		if err != nil {
			kept = append(kept, e)
			errs = append(errs, err)
			continue
		}
		record(ch)
	}
	return kept, errors.Join(errs...)
}

func (pr *pruner) release1(ctx context.Context, e InventoryEntry) (ObjectChange, error) {
	ch := ObjectChange{Object: e.ObjectRef, Addon: e.Addon, Action: ActionReleased}
	live, err := pr.get(ctx, e.ObjectRef)
	if err != nil || live == nil {
		ch.Action, ch.Message = ActionSkipped, msgGone
		return ch, err
	}
	if owner := live.Labels[LabelProfile]; owner != pr.profile || !pr.fleet.owns(live.Labels) {
		ch.Action, ch.Message = ActionSkipped, pr.keepReason(live)
		return ch, nil
	}
	err = pr.kube.Patch(ctx, live, client.RawPatch(types.MergePatchType, releasePatch), client.FieldOwner(FieldManager))
	if err != nil {
		return ch, &ObjectError{Object: e.ObjectRef, Op: "release", Err: err}
	}
	return ch, nil
}
