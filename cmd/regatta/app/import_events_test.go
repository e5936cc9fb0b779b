package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportSveltosEventRenders: Sveltos' service event trigger example
// (migrate/sveltos/testdata/corpus) imports with exit 0 into an event
// source and an event profile, and `regatta render --event-resource`
// makes the Ingress the example says Sveltos makes: one path per Service
// of namespace eng exposing 443 or 8443, with that port.
func TestImportSveltosEventRenders(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	writeFiles(t, dir, map[string]string{
		"clusters.yaml": "apiVersion: lib.projectsveltos.io/v1beta1\nkind: SveltosCluster\nmetadata: {name: fv-1, labels: {env: fv}}\n",
		"services.yaml": `apiVersion: v1
kind: Service
metadata: {name: my-service, namespace: eng}
spec: {ports: [{port: 80}, {port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: my-service-2, namespace: eng}
spec: {ports: [{port: 80}, {port: 8443}]}
---
apiVersion: v1
kind: Service
metadata: {name: plain, namespace: eng}
spec: {ports: [{port: 80}]}
`,
	})
	code, stdout, stderr := run(t, "import", "sveltos", "../../../migrate/sveltos/testdata/corpus/service-event-trigger.yaml",
		filepath.Join(dir, "clusters.yaml"), "--out", out)
	if code != 0 || strings.Contains(stdout, "invalid here") || strings.Contains(stdout, "not a kind") {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, "validate", out); code != 0 {
		t.Fatalf("validate: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, "render", "--cluster", "fv-1", "--profile", "ingress-configuration",
		"--event-resource", filepath.Join(dir, "services.yaml"), out)
	if code != 0 {
		t.Fatalf("render: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"kind: Ingress", "path: /my-service\n", "number: 443", "path: /my-service-2", "number: 8443"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("render lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "/plain") {
		t.Errorf("a Service without 443 or 8443 got a path:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "events", "https-service.yaml")); err != nil {
		t.Error(err)
	}
}
