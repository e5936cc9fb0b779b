package deploy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

func loadChart(t *testing.T) *Chart {
	t.Helper()
	c, err := LoadChart("charts/regatta", "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// values builds chart values from dotted paths.
func values(kv map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range kv {
		m := out
		parts := strings.Split(k, ".")
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[parts[len(parts)-1]] = v
	}
	return out
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && (name == "" || o.GetName() == name) {
			return o
		}
	}
	return nil
}

// TestBadValuesFailNamingTheValue: values that would install a regatta
// that cannot work fail at render, naming the value to fix.
func TestBadValuesFailNamingTheValue(t *testing.T) {
	c := loadChart(t)
	url := "https://git.example.com/fleet.git"
	tests := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"empty repository URL", values(map[string]any{"fleet.repository.url": ""}), "fleet.repository.url is required"},
		{"no repository URL", values(map[string]any{}), "fleet.repository.url is required"},
		{"shard mode with 1 replica", values(map[string]any{"fleet.repository.url": url, "replicasMode": "shard", "replicas": 1}),
			"replicas is 1 with replicasMode shard"},
		{"ssh without a Secret name", values(map[string]any{"fleet.repository.url": url, "fleet.repository.auth.type": "ssh"}),
			"fleet.repository.auth.secretName is required with fleet.repository.auth.type ssh"},
		{"webhook without a Secret name", values(map[string]any{"fleet.repository.url": url, "webhook.enabled": true}),
			"webhook.secretName is required"},
		{"ingress without a host", values(map[string]any{"fleet.repository.url": url, "webhook.enabled": true,
			"webhook.secretName": "hook", "webhook.ingress.enabled": true}), "webhook.ingress.host is required"},
		{"unknown replicas mode", values(map[string]any{"fleet.repository.url": url, "replicasMode": "sharded"}), "replicasMode"},
		{"unknown auth type", values(map[string]any{"fleet.repository.url": url, "fleet.repository.auth.type": "password"}),
			"/fleet/repository/auth/type"},
		{"zero replicas", values(map[string]any{"fleet.repository.url": url, "replicas": 0}), "replicas"},
		{"signature check without keys", values(map[string]any{"fleet.repository.url": url, "verify.mode": "every"}),
			"verify.secretName is required with verify.mode every"},
		{"unknown signature check mode", values(map[string]any{"fleet.repository.url": url, "verify.mode": "tag", "verify.secretName": "k"}),
			"/verify/mode"},
		{"misspelt value", values(map[string]any{"fleet.repository.url": url, "fleet.repository.brnch": "dev"}), "brnch"},
		{"misspelt top-level value", values(map[string]any{"fleet.repository.url": url, "replica": 3}), "replica"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Render(context.Background(), "regatta-system", tt.values)
			if err == nil {
				t.Fatal("rendered, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

// TestChartOptions checks what each option renders.
func TestChartOptions(t *testing.T) {
	c := loadChart(t)
	base := map[string]any{"fleet.repository.url": "https://git.example.com/fleet.git"}
	with := func(kv map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range kv {
			m[k] = v
		}
		return values(m)
	}
	render := func(t *testing.T, v map[string]any) []*unstructured.Unstructured {
		t.Helper()
		objs, err := c.Render(context.Background(), "ops", v)
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	t.Run("image defaults to the appVersion", func(t *testing.T) {
		d := find(render(t, with(nil)), "Deployment", "regatta")
		if img := container(t, d)["image"]; img != "ghcr.io/regatta-dev/regatta:"+c.Meta.AppVersion {
			t.Errorf("image %v, want the chart's appVersion %s", img, c.Meta.AppVersion)
		}
		d = find(render(t, with(map[string]any{"image.digest": "sha256:" + strings.Repeat("ab", 32)})), "Deployment", "")
		if img := container(t, d)["image"].(string); !strings.HasSuffix(img, "@sha256:"+strings.Repeat("ab", 32)) {
			t.Errorf("image %v, want the digest", img)
		}
	})
	t.Run("a release stamps the version", func(t *testing.T) {
		s, err := LoadChart("charts/regatta", "v9.8.7")
		if err != nil {
			t.Fatal(err)
		}
		objs, err := s.Render(context.Background(), "ops", with(nil))
		if err != nil {
			t.Fatal(err)
		}
		if img := container(t, find(objs, "Deployment", ""))["image"]; img != "ghcr.io/regatta-dev/regatta:v9.8.7" {
			t.Errorf("image %v", img)
		}
	})
	t.Run("optional objects", func(t *testing.T) {
		objs := render(t, with(nil))
		for _, k := range []string{"ServiceMonitor", "Ingress", "StatefulSet"} {
			if find(objs, k, "") != nil {
				t.Errorf("%s rendered by default", k)
			}
		}
		objs = render(t, with(map[string]any{"metrics.serviceMonitor.enabled": true, "webhook.enabled": true,
			"webhook.secretName": "hook", "webhook.ingress.enabled": true, "webhook.ingress.host": "regatta.example.com",
			"replicasMode": "shard", "replicas": 3}))
		for _, k := range []string{"ServiceMonitor", "Ingress", "StatefulSet", "PodDisruptionBudget", "NetworkPolicy"} {
			if find(objs, k, "") == nil {
				t.Errorf("no %s rendered", k)
			}
		}
	})
	t.Run("signature check, central and agent", func(t *testing.T) {
		for _, agent := range []bool{false, true} {
			v := map[string]any{"verify.mode": "every", "verify.secretName": "signers", "verify.policyKey": "policy.yaml"}
			if agent {
				v["agent.enabled"], v["agent.cluster"] = true, "edge-1"
			}
			d := find(render(t, with(v)), "Deployment", "")
			args, _, _ := unstructured.NestedStringSlice(container(t, d), "args")
			for _, w := range []string{"--verify-commits=every", "--trusted-keys=/etc/regatta/verify", "--signers-policy=/etc/regatta/verify/policy.yaml"} {
				if !strings.Contains(strings.Join(args, " "), w) {
					t.Errorf("agent %v: args %v lack %s", agent, args, w)
				}
			}
			vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
			if !strings.Contains(fmt.Sprint(vols), "secretName:signers") {
				t.Errorf("agent %v: no volume of Secret signers: %v", agent, vols)
			}
		}
	})
	t.Run("credentials", func(t *testing.T) {
		for typ, want := range map[string][]string{
			"basic": {"--git-password-file=/etc/regatta/git/password"},
			"token": {"--git-token-file=/etc/regatta/git/bearerToken"},
			"ssh":   {"--git-ssh-key-file=/etc/regatta/git/identity", "--git-known-hosts-file=/etc/regatta/git/known_hosts"},
		} {
			d := find(render(t, with(map[string]any{"fleet.repository.auth.type": typ,
				"fleet.repository.auth.secretName": "git"})), "Deployment", "")
			args, _, _ := unstructured.NestedStringSlice(container(t, d), "args")
			for _, w := range want {
				if !strings.Contains(strings.Join(args, " "), w) {
					t.Errorf("%s: args %v lack %s", typ, args, w)
				}
			}
		}
	})
	t.Run("status history", func(t *testing.T) {
		for _, tc := range []struct {
			values map[string]any
			want   string
		}{
			{nil, ""},
			{map[string]any{"fleet.statusHistoryKeep": 1000}, "--status-history-keep=1000"},
			{map[string]any{"fleet.statusHistoryKeep": 2000000, "agent.enabled": true, "agent.cluster": "edge-1"}, "--status-history-keep=2000000"},
		} {
			args, _, _ := unstructured.NestedStringSlice(container(t, find(render(t, with(tc.values)), "Deployment", "")), "args")
			got := strings.Join(args, " ")
			if tc.want == "" && strings.Contains(got, "--status-history-keep") || !strings.Contains(got, tc.want) {
				t.Errorf("%v: args %v, want %q", tc.values, args, tc.want)
			}
		}
	})
}

// chartCases are value sets applied into restricted namespaces.
var chartCases = []struct {
	ns     string
	values map[string]any
}{
	{"chart-defaults", map[string]any{}},
	{"chart-full", map[string]any{
		"replicasMode":                     "shard",
		"replicas":                         3,
		"fleet.repository.auth.type":       "ssh",
		"fleet.repository.auth.secretName": "git",
		"fleet.repository.caSecretName":    "git-ca",
		"sops.age.secretName":              "sops",
		"webhook.enabled":                  true,
		"webhook.secretName":               "hook",
		"webhook.ingress.enabled":          true,
		"webhook.ingress.host":             "regatta.example.com",
		"webhook.ingress.tlsSecretName":    "regatta-tls",
		"networkPolicy.metricsFrom": []any{map[string]any{"namespaceSelector": map[string]any{
			"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}}}},
	}},
	{"chart-single", map[string]any{
		"replicas":                         1,
		"fleet.repository.auth.type":       "token",
		"fleet.repository.auth.secretName": "git",
		"podDisruptionBudget.enabled":      false,
		"networkPolicy.enabled":            false,
	}},
}

// TestChartAdmittedInRestrictedNamespace renders the chart with regatta's
// Helm renderer, applies it server-side into namespaces that enforce (and
// warn about) the restricted Pod Security Standard, and checks that the
// API server warns about nothing and admits the workload's pod.
func TestChartAdmittedInRestrictedNamespace(t *testing.T) {
	c := loadChart(t)
	cluster := env.Cluster("chart")
	for _, tt := range chartCases {
		t.Run(tt.ns, func(t *testing.T) {
			v := map[string]any{
				"fleet.repository.url":            "https://git.example.com/fleet.git",
				"rbac.kubeconfigSecretNamespaces": []any{tt.ns},
			}
			for k, x := range tt.values {
				v[k] = x
			}
			objs, err := c.Render(context.Background(), tt.ns, values(v))
			if err != nil {
				t.Fatal(err)
			}
			objs = append([]*unstructured.Unstructured{restrictedNamespace(tt.ns)}, objs...)
			if w := applyAll(t, cluster, objs); len(w) > 0 {
				t.Errorf("the API server warned: %q", w)
			}
			checkPodAdmitted(t, cluster, objs)
			shard := tt.values["replicasMode"] == "shard"
			checkAccess(t, cluster, tt.ns, tt.ns, []access{
				{"get", "", "secrets", tt.ns, true},
				{"list", "", "secrets", tt.ns, false},
				{"create", "coordination.k8s.io", "leases", tt.ns, true},
				{"list", "coordination.k8s.io", "leases", tt.ns, shard},
				{"get", "", "secrets", "default", false},
			})
		})
	}
}

// restrictedNamespace enforces and warns about the restricted Pod
// Security Standard (warn: workloads are checked at apply, enforce: pods).
func restrictedNamespace(ns string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata": map[string]any{
			"name": ns,
			"labels": map[string]any{
				"pod-security.kubernetes.io/enforce": "restricted",
				"pod-security.kubernetes.io/warn":    "restricted",
			},
		},
	}}
}

// checkPodAdmitted creates (dry run) a pod of the workload's template in
// its namespace, which must enforce the restricted Pod Security Standard;
// a pod without a security context is refused there first, so the check
// cannot pass on an API server without Pod Security admission.
func checkPodAdmitted(t *testing.T, cluster *testenv.Cluster, objs []*unstructured.Unstructured) {
	t.Helper()
	wl := find(objs, "Deployment", "")
	if wl == nil {
		wl = find(objs, "StatefulSet", "")
	}
	ns := wl.GetNamespace()
	cs := kubernetes.NewForConfigOrDie(cluster.RESTConfig())
	nsObj, err := cs.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l := nsObj.Labels["pod-security.kubernetes.io/enforce"]; l != "restricted" {
		t.Fatalf("namespace %s enforces %q, want restricted", ns, l)
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	bare := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "unrestricted", Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(t.Context(), bare, dry); !apierrors.IsForbidden(err) {
		t.Fatalf("a pod without security context in %s: %v, want forbidden by Pod Security", ns, err)
	}
	spec, _, _ := unstructured.NestedMap(wl.Object, "spec", "template", "spec")
	var pod corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"spec": spec}, &pod); err != nil {
		t.Fatal(err)
	}
	pod.Name, pod.Namespace = wl.GetName()+"-0", ns
	if _, err := cs.CoreV1().Pods(ns).Create(t.Context(), &pod, dry); err != nil {
		t.Errorf("%s %s/%s: its pod is not admitted: %v", wl.GetKind(), ns, wl.GetName(), err)
	}
}

// TestChartDeploymentBecomesAvailable installs the chart with its
// defaults on a cluster with controllers, a scheduler and kwok nodes, in a
// namespace enforcing the restricted Pod Security Standard: the
// Deployment's ReplicaSet creates the pods, admission accepts them, they
// are scheduled and turn ready, and the Deployment becomes Available.
func TestChartDeploymentBecomesAvailable(t *testing.T) {
	const ns = "regatta-live"
	cluster := env.Cluster("live")
	objs, err := loadChart(t).Render(context.Background(), ns, values(map[string]any{
		"fleet.repository.url":            "https://git.example.com/fleet.git",
		"rbac.kubeconfigSecretNamespaces": []any{ns},
	}))
	if err != nil {
		t.Fatal(err)
	}
	applyAll(t, cluster, append([]*unstructured.Unstructured{restrictedNamespace(ns)}, objs...))
	dep := find(objs, "Deployment", "")
	cs := kubernetes.NewForConfigOrDie(cluster.RESTConfig())
	var last string
	testenv.WaitFor(t, 3*time.Minute, "Deployment "+dep.GetName()+" Available", func() bool {
		d, err := cs.AppsV1().Deployments(ns).Get(t.Context(), dep.GetName(), metav1.GetOptions{})
		if err != nil || d.Spec.Replicas == nil {
			return false
		}
		last = fmt.Sprintf("%d/%d ready, conditions %v", d.Status.ReadyReplicas, *d.Spec.Replicas, d.Status.Conditions)
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
				return d.Status.ReadyReplicas == *d.Spec.Replicas && d.Status.ObservedGeneration == d.Generation
			}
		}
		return false
	})
	t.Logf("Deployment %s: %s", dep.GetName(), last)
	pods, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Spec.SecurityContext == nil || p.Spec.SecurityContext.RunAsNonRoot == nil || !*p.Spec.SecurityContext.RunAsNonRoot {
			t.Errorf("pod %s: node %q, security context %+v", p.Name, p.Spec.NodeName, p.Spec.SecurityContext)
		}
	}
}

// TestChartAgentGrantsItsOwnClusterOnly installs the agent of a pulled
// cluster (agent.enabled) on a real API server: it runs `regatta run
// --cluster` without a management cluster, reads no Secret, and may do
// what regatta itself needs (Namespaces, ConfigMaps in regatta-system,
// its Leases) plus agent.rbac.rules, nothing more.
func TestChartAgentGrantsItsOwnClusterOnly(t *testing.T) {
	c := loadChart(t)
	cluster := env.Cluster("chart")
	const ns = "regatta-system"
	if _, err := c.Render(context.Background(), ns, values(map[string]any{
		"fleet.repository.url": "https://git.example.com/fleet.git", "agent.enabled": true,
	})); err == nil || !strings.Contains(err.Error(), "agent.cluster is required") {
		t.Errorf("agent without agent.cluster: %v", err)
	}
	objs, err := c.Render(context.Background(), ns, values(map[string]any{
		"fleet.repository.url": "https://git.example.com/fleet.git",
		"agent.enabled":        true,
		"agent.cluster":        "edge-1",
		"agent.rbac.rules":     []any{map[string]any{"apiGroups": []any{"apps"}, "resources": []any{"deployments"}, "verbs": []any{"get", "list", "watch", "create", "patch", "delete"}}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	args := fmt.Sprint(container(t, find(objs, "Deployment", ""))["args"])
	for _, want := range []string{"--cluster=edge-1", "--fleet-status-branch=regatta/status"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %s lack %s", args, want)
		}
	}
	for _, not := range []string{"--management-kubeconfig", "--status-branch="} {
		if strings.Contains(args, not) {
			t.Errorf("args %s hold %s", args, not)
		}
	}
	objs = append([]*unstructured.Unstructured{restrictedNamespace(ns)}, objs...)
	if w := applyAll(t, cluster, objs); len(w) > 0 {
		t.Errorf("the API server warned: %q", w)
	}
	checkPodAdmitted(t, cluster, objs)
	checkAccess(t, cluster, "agent", ns, []access{
		{"get", "", "namespaces", "", true},
		{"create", "", "namespaces", "", true},
		{"create", "", "configmaps", ns, true},
		{"delete", "", "configmaps", ns, true},
		{"create", "coordination.k8s.io", "leases", ns, true},
		{"create", "apps", "deployments", "default", true},
		{"get", "", "secrets", ns, false},
		{"list", "", "secrets", "", false},
		{"create", "", "configmaps", "default", false},
		{"create", "rbac.authorization.k8s.io", "clusterroles", "", false},
		{"delete", "", "namespaces", "", false},
	})
}

// TestChartAgentStatusAuth: agent.statusAuth gives the agent a Git
// credential for its status pushes only (--status-git-*, its user name
// from the Secret), so that fleet.repository.auth may be read-only; it
// needs a Secret, and means nothing without agent.enabled.
func TestChartAgentStatusAuth(t *testing.T) {
	c := loadChart(t)
	base := map[string]any{
		"fleet.repository.url": "https://git.example.com/fleet.git", "fleet.repository.auth.type": "basic",
		"fleet.repository.auth.secretName": "fleet-reader", "agent.enabled": true, "agent.cluster": "edge-1",
		"agent.statusAuth.type": "basic",
	}
	if _, err := c.Render(context.Background(), "regatta-system", values(base)); err == nil || !strings.Contains(err.Error(), "agent.statusAuth.secretName is required") {
		t.Errorf("statusAuth without a Secret: %v", err)
	}
	base["agent.statusAuth.secretName"] = "edge-1-status"
	objs, err := c.Render(context.Background(), "regatta-system", values(base))
	if err != nil {
		t.Fatal(err)
	}
	d := find(objs, "Deployment", "")
	ctr := container(t, d)
	if args := fmt.Sprint(ctr["args"]); !strings.Contains(args, "--status-git-password-file=/etc/regatta/status-git/password") || !strings.Contains(args, "--git-password-file=/etc/regatta/git/password") {
		t.Errorf("args %s", args)
	}
	if env := fmt.Sprint(ctr["env"]); !strings.Contains(env, "REGATTA_STATUS_GIT_USERNAME") || !strings.Contains(env, "edge-1-status") {
		t.Errorf("env %s", env)
	}
	if vols := fmt.Sprint(d.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["volumes"]); !strings.Contains(vols, "secretName:edge-1-status") {
		t.Errorf("volumes %s", vols)
	}
	delete(base, "agent.enabled")
	objs, err = c.Render(context.Background(), "regatta-system", values(base))
	if err != nil {
		t.Fatal(err)
	}
	if args := fmt.Sprint(container(t, find(objs, "Deployment", ""))["args"]); strings.Contains(args, "status-git") {
		t.Errorf("the central daemon got the agent's status credential: %s", args)
	}
}

// TestChartNotifications: notifications are on by default, with a Role
// that reads Secrets, keeps the ledger ConfigMap and records Events in the
// release's namespace only; off, neither Role nor flags; the
// PrometheusRule ships behind its switch with the shard alert only for
// shard mode.
func TestChartNotifications(t *testing.T) {
	c := loadChart(t)
	render := func(kv map[string]any) []*unstructured.Unstructured {
		t.Helper()
		kv["fleet.repository.url"] = "https://git.example.com/fleet.git"
		objs, err := c.Render(context.Background(), "ops", values(kv))
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	objs := render(map[string]any{"notifications.dashboardURL": "https://git.example.com/fleet/-/blob/regatta/status/status/README.md"})
	role := find(objs, "Role", "regatta-notifications")
	if role == nil || role.GetNamespace() != "ops" {
		t.Fatalf("no notifications Role in the release's namespace: %v", role)
	}
	args := strings.Join(containerArgs(t, find(objs, "Deployment", "")), " ")
	for _, want := range []string{"--notify-namespace=ops", "--notify-group-wait=30s", "--notify-dashboard-url=https://git.example.com/fleet/-/blob/regatta/status/status/README.md"} {
		if !strings.Contains(args, want) {
			t.Errorf("args lack %s: %s", want, args)
		}
	}
	if find(objs, "PrometheusRule", "") != nil {
		t.Error("a PrometheusRule without metrics.prometheusRule.enabled")
	}
	objs = render(map[string]any{"notifications.enabled": false, "metrics.prometheusRule.enabled": true})
	if find(objs, "Role", "regatta-notifications") != nil || strings.Contains(strings.Join(containerArgs(t, find(objs, "Deployment", "")), " "), "--notify-") {
		t.Error("notifications off still grant or configure them")
	}
	rule := find(objs, "PrometheusRule", "regatta")
	if rule == nil {
		t.Fatal("no PrometheusRule with metrics.prometheusRule.enabled")
	}
	raw, _ := rule.MarshalJSON()
	for _, want := range []string{"RegattaPairFailed", "RegattaRolloutHalted", "RegattaClusterUnreachable", "RegattaRevisionRefused", "RegattaStatusCommitsFailing"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the PrometheusRule lacks %s", want)
		}
	}
	if strings.Contains(string(raw), "RegattaShardMemberMissing") {
		t.Error("a shard alert without shard mode")
	}
	if strings.Contains(string(raw), "RegattaSignatureRefused") {
		t.Error("a signature alert without verify.mode")
	}
	raw, _ = find(render(map[string]any{"metrics.prometheusRule.enabled": true, "verify.mode": "every", "verify.secretName": "signers"}), "PrometheusRule", "").MarshalJSON()
	if !strings.Contains(string(raw), "increase(regatta_revisions_refused_total[15m])") {
		t.Errorf("verify.mode: no RegattaSignatureRefused: %s", raw)
	}
	raw, _ = find(render(map[string]any{"metrics.prometheusRule.enabled": true, "replicasMode": "shard", "replicas": 3}), "PrometheusRule", "").MarshalJSON()
	if !strings.Contains(string(raw), `"expr":"min(regatta_shard_members) \u003c 3"`) {
		t.Errorf("shard mode: %s", raw)
	}
}

func containerArgs(t *testing.T, d *unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	for _, a := range container(t, d)["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}
