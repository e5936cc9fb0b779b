package app

import (
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/repo"
)

// fleetIdentity is --fleet, or one derived from the repository location.
// Only the derived identity adopts inventories and objects written before
// fleet identities existed (no regatta.dev/fleet label): a cluster that
// one regatta managed keeps working after the upgrade, while a fleet given
// its own --fleet never claims another regatta's unlabelled objects.
func fleetIdentity(flag, repoURL string) (apply.Fleet, error) {
	if flag != "" {
		f := apply.Fleet{ID: flag}
		if err := f.Validate(); err != nil {
			return f, usageError("--fleet: %v", err)
		}
		return f, nil
	}
	canonical, err := repo.CanonicalURL(repoURL)
	if err != nil {
		return apply.Fleet{}, usageError("--repo: %v", err)
	}
	return apply.Fleet{ID: apply.DeriveFleetID(canonical), Legacy: true}, nil
}
