package reconciler

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
)

// TestLuaErrorsVisible: a health script that indexes a nil field fails
// its add-on at once (not after the health timeout) with script, line and
// error in the pair's status record; a failing classifier script goes into
// the cluster's status record. Both are logged.
func TestLuaErrorsVisible(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{
		"profiles/scripted.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: scripted}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  addons:
  - name: settings
    manifests: {path: scripted}
  healthChecks:
  - group: ""
    kind: ConfigMap
    script: |
      hs = {status = "Progressing"}
      if obj.status.ready then hs.status = "Healthy" end
      return hs
`,
		"scripted/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: scripted, namespace: default}\n",
		"profiles/looping.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata: {name: looping}
spec:
  clusterSelector: {matchLabels: {env: prod}}
  addons:
  - name: account
    manifests: {path: looping}
  healthChecks:
  - group: ""
    kind: ServiceAccount
    script: |
      while true do end
`,
		"looping/sa.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: looping, namespace: default}\n",
		"classifiers/broken.yaml": `apiVersion: regatta.dev/v1alpha1
kind: Classifier
metadata: {name: broken}
spec:
  classifierLabels: {broken: "yes"}
  deployedResourceConstraint:
    resourceSelectors:
    - {group: "", version: v1, kind: Namespace}
    aggregatedClassification: |
      function evaluate()
        return {matching = resources[1].spec.missing.field}
      end
`,
	}
	_, h := oneClusterFleet(t, files)
	start := time.Now()
	res, err := h.d.RunOnce(ctx)
	took := time.Since(start)
	if !errors.Is(err, ErrUnconverged) {
		t.Fatalf("RunOnce: %v, want unconverged", err)
	}
	if took > 10*time.Second { // the health timeout is 20 s
		t.Errorf("the pass took %s: the failing health script waited for the timeout", took)
	}
	var c status.ClusterStatus
	for _, cs := range res.Snapshot.Clusters {
		if cs.Cluster == "c37" {
			c = cs
		}
	}
	var rec *status.Profile
	for i := range c.Profiles {
		if c.Profiles[i].Name == "scripted" {
			rec = &c.Profiles[i]
		}
	}
	wantHealth := "profiles/scripted.yaml spec.healthChecks[0].script:2: attempt to index a nil value"
	if rec == nil || rec.State != status.StateFailed || rec.Error == nil || !strings.Contains(rec.Error.Message, wantHealth) {
		t.Errorf("pair record %+v, want Failed with %q", rec, wantHealth)
	}
	for i := range c.Profiles {
		if p := c.Profiles[i]; p.Name == "looping" && (p.State != status.StateFailed || p.Error == nil ||
			!strings.Contains(p.Error.Message, "health script failed: profiles/looping.yaml spec.healthChecks[0].script")) {
			t.Errorf("looping health script: %+v %+v", p, p.Error)
		}
	}
	if len(c.ClassifierErrors) != 1 || c.ClassifierErrors[0].Classifier != "broken" ||
		!strings.Contains(c.ClassifierErrors[0].Message, ":2: attempt to index a nil value") {
		t.Errorf("classifier errors %+v, want broken with line 2", c.ClassifierErrors)
	}
}
