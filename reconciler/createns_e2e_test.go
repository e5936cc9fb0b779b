package reconciler

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/internal/chartserver"
	"github.com/regatta-dev/regatta/migrate"
	"github.com/regatta-dev/regatta/migrate/flux"
	"github.com/regatta-dev/regatta/migrate/sveltos"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/helm"
	"github.com/regatta-dev/regatta/render/sops"
	"github.com/regatta-dev/regatta/spec"
)

const creatensData = "testdata/createns"

// creatensChartRepo serves testdata/createns/chart (a pre-install hook and
// a ConfigMap, no namespaces in its templates) from a chart repository.
func creatensChartRepo(t *testing.T) string {
	t.Helper()
	repo := chartserver.NewRepo(t)
	repo.Add(t, chartserver.Package(t, filepath.Join(creatensData, "chart"), ""))
	return repo.URL
}

// withCharts makes the harness render charts (in this process).
func withCharts(t *testing.T, h *harness) {
	t.Helper()
	keys, err := sops.LoadAgeKeyFile(testKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	h.r.opts.Renderer = render.New(render.Options{Keys: keys, Helm: helm.New(helm.Options{CacheDir: t.TempDir()})})
}

// fleetFiles reads the files an import wrote, but the cluster folders.
func fleetFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(rel, "clusters"+string(filepath.Separator)) {
			return nil
		}
		data, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func reportMentions(t *testing.T, r *migrate.Report, what string) {
	t.Helper()
	for _, f := range r.Findings() {
		if strings.Contains(f.Message, what) {
			return
		}
	}
	t.Errorf("the import report does not mention %q: %v", what, r.Findings())
}

func getNamespace(t *testing.T, name string) *corev1.Namespace {
	t.Helper()
	ns, err := clientset(t, "c37").CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// nsDeleting reports whether a namespace is gone or being deleted (the
// test clusters run no namespace controller to finish the deletion).
func nsDeleting(t *testing.T, name string) bool {
	t.Helper()
	ns := getNamespace(t, name)
	return ns == nil || ns.DeletionTimestamp != nil
}

// checkCreated checks that a namespace regatta created carries its
// ownership labels and holds the chart's hook and objects.
func checkCreated(t *testing.T, name, profile, release string) {
	t.Helper()
	ns := getNamespace(t, name)
	if ns == nil {
		t.Fatalf("namespace %s was not created", name)
	}
	if l := ns.Labels; l[apply.LabelProfile] != profile || l[apply.LabelCluster] != "c37" || l[apply.LabelAddon] == "" {
		t.Errorf("namespace %s labels %v", name, l)
	}
	if ns.Annotations[spec.AnnotationCreatedNamespace] != "true" {
		t.Errorf("namespace %s annotations %v", name, ns.Annotations)
	}
	for _, cm := range []string{release + "-pre", release + "-settings"} {
		if configMap(t, "c37", name, cm) == nil {
			t.Errorf("ConfigMap %s/%s of the chart is missing", name, cm)
		}
	}
}

// TestImportedSveltosProfileCreatesNamespace: a ClusterProfile shaped as
// Sveltos documents them (releaseNamespace, createNamespace left to its
// default), imported, deploys on a fresh cluster: the release namespace
// is created before the chart's pre-install hook, with regatta's labels.
// A release namespace that existed is used, never adopted: withdrawing
// the profile deletes the namespace regatta created and keeps that one.
func TestImportedSveltosProfileCreatesNamespace(t *testing.T) {
	ctx := context.Background()
	url := creatensChartRepo(t)
	data, err := os.ReadFile(filepath.Join(creatensData, "sveltos", "clusterprofiles.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "clusterprofiles.yaml")
	if err := os.WriteFile(in, []byte(strings.ReplaceAll(string(data), "CHART_REPO_URL", url)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	imp, err := sveltos.Run(ctx, sveltos.Options{Files: []string{in}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	reportMentions(t, imp.Report, "helm.createNamespace: true (Sveltos' default)")
	existing := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sv-existing", Labels: map[string]string{"team": "a"}}}
	if _, err := clientset(t, "c37").CoreV1().Namespaces().Create(ctx, existing, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	f, h := oneClusterFleet(t, fleetFiles(t, out))
	withCharts(t, h)
	res, _ := h.d.RunOnce(ctx)
	if p := pairs(res, "c37")["createns-sveltos"]; p.State != string(status.StateApplied) {
		t.Fatalf("state %s, error %+v", p.State, p.Error)
	}
	checkCreated(t, "sv-fresh", "createns-sveltos", "fresh")
	ns := getNamespace(t, "sv-existing")
	if _, labelled := ns.Labels[apply.LabelProfile]; labelled || ns.Labels["team"] != "a" {
		t.Errorf("the existing namespace was adopted: labels %v", ns.Labels)
	}
	if configMap(t, "c37", "sv-existing", "existing-settings") == nil {
		t.Error("the chart's objects are not in the existing namespace")
	}

	f.Commit("c37 leaves the profile", clusterFiles(t, "c37", "env: dev"))
	h.d.RunOnce(ctx)
	if !nsDeleting(t, "sv-fresh") {
		t.Error("withdrawal left the empty namespace regatta created")
	}
	if nsDeleting(t, "sv-existing") {
		t.Error("withdrawal deleted a namespace that existed before")
	}
}

// TestImportedFluxReleaseCreatesNamespace: HelmReleases with
// install.createNamespace whose target namespaces do not exist, imported,
// deploy on a fresh cluster. Withdrawn, the namespace that holds a Secret
// regatta did not apply is kept with a status message; the one annotated
// prune-contents: enabled is deleted with its Secret.
func TestImportedFluxReleaseCreatesNamespace(t *testing.T) {
	ctx := context.Background()
	url := creatensChartRepo(t)
	src := filepath.Join(t.TempDir(), "src")
	if err := os.CopyFS(src, os.DirFS(filepath.Join(creatensData, "flux"))); err != nil {
		t.Fatal(err)
	}
	repoFile := filepath.Join(src, "apps", "repository.yaml")
	data, err := os.ReadFile(repoFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(repoFile, []byte(strings.ReplaceAll(string(data), "CHART_REPO_URL", url)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	imp, err := flux.Run(ctx, flux.Options{Dir: src, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	reportMentions(t, imp.Report, "carried over as helm.createNamespace")

	files := fleetFiles(t, out)
	for k, v := range clusterFiles(t, "c37", "cluster: c37") {
		files[k] = v
	}
	f := newFleetRepo(t)
	f.Commit("fleet", files)
	h := newHarness(t, f, func(o *DaemonOptions) { o.StatusBranch = "" })
	withCharts(t, h)
	res, _ := h.d.RunOnce(ctx)
	if p := pairs(res, "c37")["createns-flux"]; p.State != string(status.StateApplied) {
		t.Fatalf("state %s, error %+v (pairs %v)", p.State, p.Error, pairs(res, "c37"))
	}
	cs := clientset(t, "c37")
	for _, name := range []string{"data", "optin"} {
		checkCreated(t, "fl-"+name, "createns-flux", name)
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keep-me", Namespace: "fl-" + name}}
		if _, err := cs.CoreV1().Secrets("fl-"+name).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	optin := getNamespace(t, "fl-optin")
	optin.Annotations[spec.AnnotationPruneContents] = spec.PruneContentsEnabled
	if _, err := cs.CoreV1().Namespaces().Update(ctx, optin, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	f.Commit("c37 leaves the profile", clusterFiles(t, "c37", "cluster: gone"))
	res, _ = h.d.RunOnce(ctx)
	p := pairs(res, "c37")["createns-flux"]
	if p.State != string(status.StateWithdrawn) {
		t.Fatalf("withdrawal: state %s, error %+v", p.State, p.Error)
	}
	if nsDeleting(t, "fl-data") {
		t.Error("withdrawal deleted a namespace holding a Secret regatta did not apply")
	}
	if !strings.Contains(p.Message, "Namespace/fl-data "+apply.MsgKeptNotEmpty) || !strings.Contains(p.Message, "Secret/keep-me") {
		t.Errorf("status message %q does not say the namespace was kept and why", p.Message)
	}
	if !nsDeleting(t, "fl-optin") {
		t.Error("the namespace annotated prune-contents: enabled was not deleted")
	}
}
