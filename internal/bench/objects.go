package bench

import (
	"fmt"
	"strings"
)

// ObjectsPerProfile is the number of objects every generated profile
// renders: its Namespace and 29 objects that are healthy without
// controllers (ConfigMaps, Services, ServiceAccounts, Roles, RoleBindings,
// Secrets).
const ObjectsPerProfile = 30

// Object counts per kind in one profile (the Namespace aside).
const (
	configMaps   = 12 // plus the "settings" ConfigMap that overlays patch
	services     = 4  // one ClusterIP, the rest headless: the test clusters have 254 IPs
	accounts     = 4
	roles        = 3
	roleBindings = 3
	secrets      = 2
)

// objectText holds what varies in a profile's objects. The fields are
// written into the YAML as they are, so Helm template actions work too.
type objectText struct {
	Namespace, Profile, Variant, Generation string
}

// namespaceYAML is the profile's Namespace.
func namespaceYAML(t objectText) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels: {bench.regatta.dev/profile: %s}\n",
		t.Namespace, t.Profile)
}

// objectsYAML returns the profile's 29 namespaced objects as one stream.
func objectsYAML(t objectText) string {
	var docs []string
	docs = append(docs, settingsYAML(t))
	for i := range configMaps {
		docs = append(docs, configMapYAML(t, i))
	}
	for i := range services {
		docs = append(docs, serviceYAML(t, i))
	}
	for i := range accounts {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa-%02d\n  namespace: %s\n%s",
			i, t.Namespace, labelsYAML(t)))
	}
	for i := range roles {
		docs = append(docs, roleYAML(t, i))
	}
	for i := range roleBindings {
		docs = append(docs, roleBindingYAML(t, i))
	}
	for i := range secrets {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: secret-%02d\n  namespace: %s\n%stype: Opaque\nstringData:\n  token: bench-token-%02d\n",
			i, t.Namespace, labelsYAML(t), i))
	}
	return strings.Join(docs, "---\n")
}

func labelsYAML(t objectText) string {
	return fmt.Sprintf("  labels:\n    app.kubernetes.io/name: %s\n    app.kubernetes.io/part-of: bench\n", t.Profile)
}

// settingsYAML is the ConfigMap whose data the overlays set.
func settingsYAML(t objectText) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: %s\n%sdata:\n  variant: %q\n  generation: %q\n",
		t.Namespace, labelsYAML(t), t.Variant, t.Generation)
}

// configMapYAML is a ConfigMap of about 1 KiB.
func configMapYAML(t objectText, i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-%02d\n  namespace: %s\n%sdata:\n", i, t.Namespace, labelsYAML(t))
	for k := range 4 {
		fmt.Fprintf(&b, "  key-%d: %q\n", k, strings.Repeat(fmt.Sprintf("value %02d.%d ", i, k), 20))
	}
	return b.String()
}

func serviceYAML(t objectText, i int) string {
	clusterIP := "\n  clusterIP: None"
	if i == 0 {
		clusterIP = ""
	}
	return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-%02d\n  namespace: %s\n%sspec:%s\n  selector: {app: svc-%02d}\n  ports:\n  - {name: http, port: 80, targetPort: 8080}\n",
		i, t.Namespace, labelsYAML(t), clusterIP, i)
}

func roleYAML(t objectText, i int) string {
	return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: role-%02d
  namespace: %s
%srules:
- apiGroups: [""]
  resources: [configmaps, services]
  verbs: [get, list, watch]
`, i, t.Namespace, labelsYAML(t))
}

func roleBindingYAML(t objectText, i int) string {
	return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: binding-%02d
  namespace: %s
%sroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: role-%02d}
subjects:
- {kind: ServiceAccount, name: sa-%02d, namespace: %s}
`, i, t.Namespace, labelsYAML(t), i, i, t.Namespace)
}

// WorkloadImage is the image of the health phase's Deployments: on a
// controller-backed test cluster kwok runs any image but those named
// "crash" or "never-ready", and its Pods turn Ready at once.
const WorkloadImage = "registry.test/app:1"

// deploymentYAML is the profile's Deployment "app" (the health phase).
func deploymentYAML(t objectText, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: %s
%sspec:
  replicas: %d
  selector:
    matchLabels: {app.kubernetes.io/instance: app}
  template:
    metadata:
      labels: {app.kubernetes.io/instance: app}
    spec:
      containers:
      - name: app
        image: %s
`, t.Namespace, labelsYAML(t), replicas, WorkloadImage)
}
