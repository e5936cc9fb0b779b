package reconciler

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/render/sops"
)

// TestChartWithoutNamespacesAppliesInReleaseNamespace: a chart whose
// templates set no metadata.namespace (as `helm create` charts often do)
// is applied into its releaseNamespace, as helm install and Flux do; its
// cluster-scoped objects stay cluster-scoped, and a plain manifest without
// a namespace lands in "default", as with kubectl.
func TestChartWithoutNamespacesAppliesInReleaseNamespace(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{
		"profiles/nsless.yaml": profileYAML("nsless", "env: prod", `  addons:
  - name: namespace
    manifests: {path: nsless/ns}
  - name: web
    helm: {path: nsless/chart, releaseName: nsless, releaseNamespace: nsless-team}
  - name: plain
    manifests: {path: nsless/plain}
`),
		"nsless/ns/ns.yaml":        "apiVersion: v1\nkind: Namespace\nmetadata: {name: nsless-team}\n",
		"nsless/chart/Chart.yaml":  "apiVersion: v2\nname: nsless\nversion: 0.1.0\n",
		"nsless/chart/values.yaml": "greeting: hello\n",
		"nsless/plain/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nsless-plain}\n",
		"nsless/chart/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  greeting: {{ .Values.greeting }}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ .Release.Name }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ .Release.Name }}-reader
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get]
`,
	}
	_, h := oneClusterFleet(t, files)
	keys, err := sops.LoadAgeKeyFile(testKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	h.r.opts.Renderer = render.New(render.Options{Keys: keys, Helm: helm.New(helm.Options{CacheDir: t.TempDir()})})
	res, _ := h.d.RunOnce(ctx)
	if p := pairs(res, "c37")["nsless"]; p.State != status.StateApplied {
		t.Fatalf("state %s, error %+v", p.State, p.Error)
	}
	if configMap(t, "c37", "nsless-team", "nsless-settings")["greeting"] != "hello" {
		t.Error("the chart's ConfigMap is not in the release namespace")
	}
	cs := clientset(t, "c37")
	if _, err := cs.CoreV1().ServiceAccounts("nsless-team").Get(ctx, "nsless", metav1.GetOptions{}); err != nil {
		t.Errorf("the chart's ServiceAccount: %v", err)
	}
	var cr *rbacv1.ClusterRole
	if cr, err = cs.RbacV1().ClusterRoles().Get(ctx, "nsless-reader", metav1.GetOptions{}); err != nil || cr.Namespace != "" {
		t.Errorf("the chart's ClusterRole: %v", err)
	}
	if configMap(t, "c37", "default", "nsless-plain") == nil {
		t.Error("the plain ConfigMap without a namespace is not in default")
	}
}
