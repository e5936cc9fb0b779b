package render

import (
	"fmt"
	"sort"

	"github.com/regatta-dev/regatta/spec"
)

// plan is a request made ready to render or to look up: overlays chosen,
// template data assembled and each add-on's memo key computed.
type plan struct {
	req    Request
	data   templateData
	addons []addonPlan
	// dataHash and keysHash are computed on first use.
	dataHash, keysHash string
}

// addonPlan is one add-on of a plan.
type addonPlan struct {
	index   int
	addon   *spec.Addon
	overlay *spec.Overlay
	// overlayIndex is the index of overlay in spec.overlays, or -1.
	overlayIndex int
	// memoKey hashes the add-on's inputs that are neither repository
	// content nor cluster facts: its spec, its overlay and, for Helm, the
	// cluster's capabilities.
	memoKey string
}

// newPlan selects the overlays of every add-on and computes memo keys.
func newPlan(req Request) (*plan, error) {
	prof := req.Profile
	req.Cluster.APIVersions = sortedCopy(req.Cluster.APIVersions)
	p := &plan{req: req, data: dataOf(req)}
	for i := range prof.Spec.Addons {
		ad := &prof.Spec.Addons[i]
		ov, oi, err := selectOverlay(prof, ad.Name, req.Cluster.Labels)
		if err != nil {
			return nil, &Error{Profile: prof.Metadata.Name, Addon: ad.Name, File: prof.Source.File,
				Line: prof.Source.LineOf(fmt.Sprintf("spec.overlays[%d]", oi)), Err: err}
		}
		ap := addonPlan{index: i, addon: ad, overlay: ov, overlayIndex: oi}
		ap.memoKey = hashJSON(memoInputs(prof.Metadata.Name, &ap, req.Cluster))
		p.addons = append(p.addons, ap)
	}
	return p, nil
}

func dataOf(req Request) templateData {
	c := req.Cluster
	return templateData{
		Cluster: clusterData{Name: c.Name, Labels: c.Labels, Values: c.Values,
			KubernetesVersion: c.KubernetesVersion},
		Profile:  profileData{Name: req.Profile.Metadata.Name},
		Revision: req.Revision,
	}
}

// memoInputs are the inputs hashed into an add-on's memo key.
func memoInputs(profile string, ap *addonPlan, c ClusterFacts) any {
	in := map[string]any{"v": 1, "profile": profile, "index": ap.index, "addon": ap.addon}
	if ap.overlay != nil {
		in["overlay"] = ap.overlay
	}
	if ap.addon.Helm != nil {
		in["kubeVersion"], in["apiVersions"] = c.KubernetesVersion, c.APIVersions
	}
	return in
}

// factsKey is the part of the cluster's facts a render used: its template
// data when a template ran, its decryption keys when a SOPS file was read.
func (p *plan) factsKey(usedData, usedKeys bool) string {
	var k string
	if usedData {
		if p.dataHash == "" {
			p.dataHash = hashJSON(p.data)
		}
		k += "data=" + p.dataHash
	}
	if usedKeys {
		if p.keysHash == "" {
			p.keysHash = hashJSON(sortedCopy(p.req.Cluster.AgeRecipients))
		}
		k += "keys=" + p.keysHash
	}
	return k
}

func sortedCopy(s []string) []string {
	if s == nil {
		return nil
	}
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
