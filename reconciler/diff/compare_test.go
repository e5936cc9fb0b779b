package diff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/render"
)

func TestCompareRendersEachDistinctInputOnce(t *testing.T) {
	base := fleetFiles(40)
	head := edit(base, map[string]string{"web/prod/kustomization.yaml": "namespace: web\nresources: [../base]\nlabels: [{pairs: {tier: production}}]\n"})
	r := render.New(render.Options{})
	rep := compare(t, r, base, head)
	// base: web/prod, web/staging, ops; head: web/prod only.
	if _, misses := r.CacheStats(); misses != 4 {
		t.Errorf("%d renders, want 4 (one per distinct input)", misses)
	}
	if len(rep.Groups) != 1 || len(rep.Groups[0].Clusters) != 20 || rep.Summary.ClustersAffected != 20 {
		t.Fatalf("groups = %+v, summary %+v", rep.Groups, rep.Summary)
	}
	pc := rep.Groups[0].Profiles[0]
	if pc.Profile != "web" || pc.Change != ProfileUpdated || pc.Counts.Updated != 1 || !strings.Contains(pc.Objects[0].Diff, "+    tier: production") {
		t.Errorf("change = %+v", pc)
	}
	if len(rep.Warnings) != 1 || rep.Warnings[0].Kind != WarnManyClusters {
		t.Errorf("warnings = %+v", rep.Warnings)
	}
}

func TestCompareNothingChanges(t *testing.T) {
	base := fleetFiles(4)
	rep := compare(t, nil, base, edit(base, map[string]string{"README.md": "x"}))
	if rep.Summary.Changed || len(rep.Groups) != 0 || len(rep.Warnings) != 0 || rep.Failed() {
		t.Errorf("report = %+v", rep)
	}
}

func TestCompareMembershipReasons(t *testing.T) {
	base := fleetFiles(4)
	head := edit(base, map[string]string{
		"clusters/c01/cluster.yaml": strings.Replace(base["clusters/c01/cluster.yaml"], "env: staging", "env: prod", 1),
		"clusters/c02/cluster.yaml": "",
		"clusters/c09/cluster.yaml": strings.ReplaceAll(base["clusters/c00/cluster.yaml"], "c00", "c09"),
	})
	rep := compare(t, nil, base, head)
	byCluster := map[string]Group{}
	for _, g := range rep.Groups {
		for _, c := range g.Clusters {
			byCluster[c] = g
		}
	}
	if g := byCluster["c01"]; g.Profiles[0].Profile != "ops" || g.Profiles[0].Change != ProfileGained ||
		g.Profiles[0].Reasons[0].Message != "label env changed: staging → prod" {
		t.Errorf("c01: %+v", g)
	}
	if g := byCluster["c02"]; g.Change != ClusterRemoved || g.Profiles[0].Counts != (Counts{}) || len(g.Notes) != 1 {
		t.Errorf("c02 (removed: objects left in place): %+v", g)
	}
	if g := byCluster["c09"]; g.Change != ClusterAdded || g.Profiles[0].Reasons[0].Kind != ReasonClusterAdded {
		t.Errorf("c09: %+v", g)
	}
	s := rep.Summary
	if s.ClustersAdded != 1 || s.ClustersRemoved != 1 || s.ProfilesGained != 3 || s.ProfilesLost != 2 {
		t.Errorf("summary = %+v", s)
	}
}

func TestCompareLeavePoliciesReleases(t *testing.T) {
	base := fleetFiles(2)
	base["profiles/ops.yaml"] = strings.Replace(base["profiles/ops.yaml"], "spec:\n", "spec:\n  stopMatchingBehavior: LeavePolicies\n", 1)
	rep := compare(t, nil, base, edit(base, map[string]string{"profiles/ops.yaml": ""}))
	pc := rep.Groups[0].Profiles[0]
	if pc.Change != ProfileLost || pc.Counts.Released != 2 || pc.Counts.Deleted != 0 || rep.Summary.Released != 2 {
		t.Errorf("change = %+v", pc)
	}
	for _, w := range rep.Warnings {
		if w.Kind == WarnDeleteNamespace {
			t.Errorf("a released Namespace is not deleted: %+v", w)
		}
	}
}

func TestCompareHeadRenderErrors(t *testing.T) {
	base := fleetFiles(4)
	head := edit(base, map[string]string{"ops/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [}\n"})
	rep := compare(t, nil, base, head)
	if !rep.Failed() || len(rep.Errors) != 1 {
		t.Fatalf("errors = %+v", rep.Errors)
	}
	p := rep.Errors[0]
	if p.Profile != "ops" || p.File != "ops/bad.yaml" || p.Line == 0 || len(p.Clusters) != 2 ||
		!strings.HasPrefix(p.Text, "profile ops: addon ops: ops/bad.yaml:") {
		t.Errorf("problem = %+v", p)
	}
}

func TestCompareBaseRenderErrorIsAWarning(t *testing.T) {
	head := fleetFiles(2)
	base := edit(head, map[string]string{"ops/bad.yaml": "kind: [\n"})
	rep := compare(t, nil, base, head)
	if rep.Failed() || len(rep.Groups) != 1 || rep.Groups[0].Profiles[0].Counts.Created != 2 {
		t.Fatalf("report = %+v", rep)
	}
	if w := rep.Warnings[0]; w.Kind != WarnBaseRender || w.Clusters[0] != "c00" {
		t.Errorf("warnings = %+v", rep.Warnings)
	}
}

func TestCompareNeedsRenderer(t *testing.T) {
	_, err := Compare(context.Background(), Side{}, Side{}, Options{})
	if !errors.Is(err, ErrNoRenderer) {
		t.Errorf("err = %v", err)
	}
}

func TestCompareCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	files := fleetFiles(2)
	_, err := Compare(ctx, loadSide(t, "a", files), loadSide(t, "b", edit(files, map[string]string{"x": "y"})),
		Options{Renderer: render.New(render.Options{})})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

// TestCompareLeavesCachedRendersUnchanged compares revisions whose diffs
// go through both redactions (a Secret; a generated object beside a SOPS
// file) and writes the report in every format; the renders it shared with
// the render cache must not change.
func TestCompareLeavesCachedRendersUnchanged(t *testing.T) {
	gen := "namespace: ops\ngeneratorOptions: {disableNameSuffixHash: true}\nconfigMapGenerator:\n- name: gen\n  literals: [k=%s]\n"
	base := fleetFiles(4)
	base["profiles/gen.yaml"] = strings.NewReplacer("name: ops", "name: gen", "manifests: {path: ops}", "kustomize: {path: gen}").
		Replace(base["profiles/ops.yaml"])
	base["gen/kustomization.yaml"] = fmt.Sprintf(gen, "one")
	base["gen/unused.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: enc}\ndata:\n  k: ENC[AES256_GCM,data:x]\nsops:\n  mac: ENC[AES256_GCM,data:x]\n  version: 3.13.3\n"
	head := edit(base, map[string]string{
		"ops/secret.yaml":             strings.Replace(base["ops/secret.yaml"], "first-secret-value", "second-secret-value", 1),
		"gen/kustomization.yaml":      fmt.Sprintf(gen, "two"),
		"web/prod/kustomization.yaml": strings.Replace(base["web/prod/kustomization.yaml"], "tier: prod", "tier: production", 1),
	})
	r := render.New(render.Options{})
	bs, hs := loadSide(t, "base", base), loadSide(t, "head", head)
	guard := guardCache(t, r, bs, hs)

	rep, err := Compare(context.Background(), bs, hs, Options{Renderer: r})
	if err != nil {
		t.Fatal(err)
	}
	redacted := map[string][]string{}
	for _, g := range rep.Groups {
		for _, pc := range g.Profiles {
			for _, o := range pc.Objects {
				redacted[o.Ref()] = o.RedactedKeys
			}
		}
	}
	if !reflect.DeepEqual(redacted["Secret/ops/token"], []string{"stringData.token"}) ||
		!slices.Contains(redacted["ConfigMap/ops/gen"], "data.k") || len(redacted) != 3 {
		t.Fatalf("the comparison did not take the paths under test: %v", redacted)
	}
	for _, format := range []string{FormatText, FormatMarkdown, FormatJSON} {
		if err := Write(io.Discard, rep, WriteOptions{Format: format}); err != nil {
			t.Fatal(err)
		}
	}
	guard.check(t)
}

// TestCompareEventProfile: plan does not render an event profile's
// instances; it says the pair changes when its definition does, and
// nothing otherwise.
func TestCompareEventProfile(t *testing.T) {
	base := edit(fleetFiles(2), map[string]string{
		"events/svc.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: EventSource\nmetadata: {name: svc}\nspec:\n  resourceSelectors: [{version: v1, kind: Service}]\n",
		"profiles/ev.yaml": "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: ev}\nspec:\n  clusterSelector: {matchLabels: {env: prod}}\n" +
			"  eventTrigger: {eventSourceName: svc, oneForEvent: true}\n  addons:\n  - name: ev\n    template: true\n    manifests: {path: ev}\n",
		"ev/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"ev-{{ .Event.Name }}\", namespace: default}\n",
	})
	if rep := compare(t, nil, base, edit(base, map[string]string{"ops/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: ops2}\n"})); rep.Failed() {
		t.Fatalf("errors: %+v", rep.Errors)
	} else {
		for _, g := range rep.Groups {
			for _, pc := range g.Profiles {
				if pc.Profile == "ev" {
					t.Errorf("unchanged event profile reported: %+v", pc)
				}
			}
		}
	}
	rep := compare(t, nil, base, edit(base, map[string]string{"ev/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"x-{{ .Event.Name }}\", namespace: default}\n"}))
	found := false
	for _, g := range rep.Groups {
		for _, pc := range g.Profiles {
			found = found || (pc.Profile == "ev" && len(pc.Notes) == 1 && strings.HasPrefix(pc.Notes[0], "event profile:"))
		}
	}
	if rep.Failed() || !found {
		t.Errorf("changed event profile: failed %v, groups %+v", rep.Failed(), rep.Groups)
	}
}

// A Namespace a createNamespace rendered (annotated as created) is deleted
// only while it is empty, and the warning says so; with prune-contents
// enabled, or for a Namespace of the manifests, everything in it goes.
func TestCompareCreatedNamespaceWarning(t *testing.T) {
	cases := map[string]struct{ annotations, want string }{
		"created":                 {`{regatta.dev/created-namespace: "true"}`, "Namespace/ops is deleted on 2 clusters where nothing else is in it: regatta created it (createNamespace) and keeps it while it holds objects"},
		"created, prune-contents": {`{regatta.dev/created-namespace: "true", regatta.dev/prune-contents: enabled}`, "Namespace/ops is deleted on 2 clusters: everything in it is deleted too"},
		"declared":                {`{team: ops}`, "Namespace/ops is deleted on 2 clusters: everything in it is deleted too"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			base := fleetFiles(4)
			base["ops/ns.yaml"] = "apiVersion: v1\nkind: Namespace\nmetadata: {name: ops, annotations: " + tc.annotations + "}\n"
			rep := compare(t, nil, base, edit(base, map[string]string{"profiles/ops.yaml": ""}))
			var got []string
			for _, w := range rep.Warnings {
				if w.Kind == WarnDeleteNamespace {
					got = append(got, w.Message)
				}
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("delete-namespace warnings %q\nwant %q", got, tc.want)
			}
		})
	}
}
