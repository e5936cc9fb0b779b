package diff

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/apply"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

// env has one cluster, "live", for the --live comparison. The package's
// other tests need no cluster.
var env *testenv.Env

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard()) // fluxcd/pkg/ssa logs through controller-runtime
	testenv.Main(m, testenv.Options{Clusters: []testenv.ClusterOptions{{Name: "live"}}}, &env)
}

const (
	liveSecretOld = "live-secret-one"
	liveSecretNew = "live-secret-two"
)

// liveFleet has the test cluster "live" and "gone", whose API server
// refuses connections; both kubeconfigs are Secret manifests in their
// folders, as the daemon reads them.
func liveFleet(t *testing.T) map[string]string {
	cluster := func(name string) string {
		return "apiVersion: regatta.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: " + name + "\n  labels: {env: test}\nspec: {}\n"
	}
	secret := func(name string, kubeconfig []byte) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + "-kubeconfig, namespace: regatta-system}\ndata:\n  value: " +
			base64.StdEncoding.EncodeToString(kubeconfig) + "\n"
	}
	gone := strings.Replace(string(env.Cluster("live").Kubeconfig()), env.Cluster("live").URL(), "https://127.0.0.1:1", 1)
	return map[string]string{
		"clusters/live/cluster.yaml":    cluster("live"),
		"clusters/live/kubeconfig.yaml": secret("live", env.Cluster("live").Kubeconfig()),
		"clusters/gone/cluster.yaml":    cluster("gone"),
		"clusters/gone/kubeconfig.yaml": secret("gone", []byte(gone)),
		"profiles/app.yaml":             liveProfile("app"),
		"profiles/extra.yaml":           liveProfile("extra"),
		"app/ns.yaml":                   "apiVersion: v1\nkind: Namespace\nmetadata: {name: live-app}\n",
		"app/settings.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: live-app}\ndata: {color: blue}\n",
		"app/other.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: live-app}\ndata: {size: s}\n",
		"app/creds.yaml":                "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: live-app}\nstringData: {pw: " + liveSecretOld + "}\n",
		"extra/cm.yaml":                 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: default}\ndata: {a: b}\n",
	}
}

func liveProfile(name string) string {
	return "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata: {name: " + name + "}\nspec:\n  clusterSelector: {matchLabels: {env: test}}\n  addons:\n  - name: " + name + "\n    manifests: {path: " + name + "}\n"
}

func liveOptions() apply.Options {
	opts := apply.DefaultOptions()
	opts.HealthPollInterval, opts.HealthTimeout = 200*time.Millisecond, 30*time.Second
	opts.Client.Timeout = 5 * time.Second
	return opts
}

// TestLiveShowsDriftAndPlannedChanges applies the base revision as the
// daemon would, edits two objects out of band, and compares a head that
// changes one object and drops a profile.
func TestLiveShowsDriftAndPlannedChanges(t *testing.T) {
	ctx := t.Context()
	base := liveFleet(t)
	head := edit(base, map[string]string{"app/settings.yaml": strings.Replace(base["app/settings.yaml"], "blue", "green", 1), "profiles/extra.yaml": ""})
	r := render.New(render.Options{})
	bs, hs := loadSide(t, "base", base), loadSide(t, "head", head)
	guard := guardCache(t, r, bs, hs) // apply and the comparisons get the cached objects
	applyLive(t, r, bs, "app", "extra")
	kc := kubeClient(t)
	editOutOfBand(t, kc)

	rep, err := Compare(ctx, bs, hs, Options{Renderer: r})
	if err != nil {
		t.Fatal(err)
	}
	m := apply.NewManager(ctx, liveOptions())
	defer m.Close()
	lr, err := Live(ctx, hs, rep, LiveOptions{Renderer: r, Manager: m, Kubeconfig: KubeconfigFromRepository(hs.Fleet.FS, nil)})
	if err != nil {
		t.Fatal(err)
	}
	rep.Live = lr
	checkLive(t, lr)
	if got := configMap(t, kc, "live-app", "settings").Data["color"]; got != "blue" {
		t.Errorf("Live changed the cluster: color %s", got)
	}
	guard.check(t)
	for _, format := range []string{FormatText, FormatMarkdown, FormatJSON} {
		var b bytes.Buffer
		if err := Write(&b, rep, WriteOptions{Format: format}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if format == FormatText {
			t.Logf("text output:\n%s", out)
		}
		for _, s := range []string{liveSecretOld, liveSecretNew, b64(liveSecretOld), b64(liveSecretNew)} {
			if strings.Contains(out, s) {
				t.Errorf("%s output holds %q", format, s)
			}
		}
		if !strings.Contains(out, "drift") || !strings.Contains(out, "unreachable") {
			t.Errorf("%s output lacks drift or the unreachable cluster:\n%s", format, out)
		}
	}
}

func checkLive(t *testing.T, lr *LiveReport) {
	t.Helper()
	gone, live := lr.Clusters[0], lr.Clusters[1]
	if gone.Cluster != "gone" || gone.Reachable || !strings.Contains(gone.Error, "unreachable") {
		t.Errorf("gone = %+v", gone)
	}
	if live.Cluster != "live" || !live.Reachable || len(live.Profiles) != 2 {
		t.Fatalf("live = %+v", live)
	}
	app, extra := live.Profiles[0], live.Profiles[1]
	objs := map[string]LiveObject{}
	for _, o := range app.Objects {
		objs[o.Ref()] = o
	}
	settings, other, creds := objs["ConfigMap/live-app/settings"], objs["ConfigMap/live-app/other"], objs["Secret/live-app/creds"]
	if settings.Action != ActionUpdated || settings.Drift || !strings.Contains(settings.Diff, "+  color: green") {
		t.Errorf("planned change: %+v", settings)
	}
	if other.Action != ActionUpdated || !other.Drift || !strings.Contains(other.Diff, "-  size: xl") {
		t.Errorf("out-of-band change: %+v", other)
	}
	if creds.Action != ActionUpdated || !creds.Drift || !strings.Contains(creds.Diff, "(redacted, changed)") {
		t.Errorf("out-of-band Secret change: %+v", creds)
	}
	if app.Counts.Unchanged != 1 || app.Counts.Updated != 3 || app.Counts.Drifted != 2 {
		t.Errorf("app counts = %+v (objects %+v)", app.Counts, app.Objects)
	}
	if !extra.Withdrawn || len(extra.Objects) != 1 || extra.Objects[0].Action != ActionDeleted || extra.Objects[0].Drift {
		t.Errorf("extra = %+v", extra)
	}
}

// applyLive applies profiles of a revision to the cluster, as the daemon does.
func applyLive(t *testing.T, r *render.Renderer, s Side, profiles ...string) {
	m := apply.NewManager(t.Context(), liveOptions())
	defer m.Close()
	cl, err := m.Cluster("live", env.Cluster("live").Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range profiles {
		prof := s.Fleet.Profile(p)
		res, err := r.Render(t.Context(), render.Request{FS: s.Fleet.FS, Revision: s.Revision, Profile: prof,
			Cluster: s.Facts(s.Fleet.Cluster("live"))})
		if err != nil {
			t.Fatal(err)
		}
		req := dryRunRequest(prof, res, s.Revision)
		req.SyncMode = spec.SyncModeContinuous
		if out := cl.Apply(t.Context(), req); out.State != apply.StateApplied {
			t.Fatalf("apply %s: %s", p, out)
		}
	}
}

func editOutOfBand(t *testing.T, kc client.Client) {
	ctx := t.Context()
	cm := configMap(t, kc, "live-app", "other")
	cm.Data["size"] = "xl"
	if err := kc.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{}
	if err := kc.Get(ctx, client.ObjectKey{Namespace: "live-app", Name: "creds"}, s); err != nil {
		t.Fatal(err)
	}
	s.Data["pw"] = []byte(liveSecretNew)
	if err := kc.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
}

func kubeClient(t *testing.T) client.Client {
	cfg := env.Cluster("live").RESTConfig()
	cfg.Timeout = 10 * time.Second
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func configMap(t *testing.T, kc client.Client, ns, name string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{}
	if err := kc.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestKubeconfigSources(t *testing.T) {
	files := liveFleet(t)
	s := loadSide(t, "x", files)
	c := s.Fleet.Cluster("live")
	got, err := KubeconfigFromRepository(s.Fleet.FS, nil)(t.Context(), c)
	if err != nil || !bytes.Equal(got, env.Cluster("live").Kubeconfig()) {
		t.Errorf("repository: %v", err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "live.kubeconfig"), []byte("k"), 0o600)
	if got, err := KubeconfigFromDir(dir)(t.Context(), c); err != nil || string(got) != "k" {
		t.Errorf("dir: %q %v", got, err)
	}
	if _, err := KubeconfigFromDir(dir)(t.Context(), s.Fleet.Cluster("gone")); err == nil || !strings.Contains(err.Error(), "no gone.yaml") {
		t.Errorf("missing: %v", err)
	}
	delete(files, "clusters/live/kubeconfig.yaml")
	s = loadSide(t, "y", files)
	if _, err := KubeconfigFromRepository(s.Fleet.FS, nil)(t.Context(), s.Fleet.Cluster("live")); err == nil {
		t.Error("no Secret, no error")
	}
}
