package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// tenantProfile is a profile of tenant team-b (on clusters north and
// west) with one add-on.
func tenantProfile(name, addon string) string {
	return "apiVersion: regatta.dev/v1alpha1\nkind: Profile\nmetadata:\n  name: " + name +
		"\nspec:\n  clusterSelector:\n    matchLabels: {team-b: \"yes\"}\n  addons:\n  - name: " + name + "\n" + addon
}

// jsonnetLoop computes for ever: 2^64 calls.
const jsonnetLoop = "local f(n) = if n == 0 then 0 else f(n - 1) + f(n - 1);\n{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'team-b' }, data: { n: std.toString(f(64)) } }\n"

// yttBomb doubles a list until memory runs out.
const yttBomb = "#@ def bomb():\n#@   s = [\"xxxxxxxxxxxxxxxx\"]\n#@   for i in range(64):\n#@     s = s + s\n#@   end\n#@   return s\n#@ end\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb, namespace: team-b}\ndata:\n  n: #@ str(len(bomb()))\n"

// TestValidateHostileTenant: one tenant's Jsonnet CPU loop, ytt memory
// bomb and OCI add-ons on registries the URL policy refuses make validate
// exit 1 within its program bounds, each named at its file, instead of
// running for ever, dying out of memory or passing with a warning.
func TestValidateHostileTenant(t *testing.T) {
	oci := func(host string) string {
		return "    oci: {url: 'oci://" + host + "/fleet/app', tag: stable}\n    kustomize: {path: .}\n"
	}
	files := map[string]string{
		"tenants/team-b/loop/main.jsonnet":   jsonnetLoop,
		"tenants/team-b/bomb/bomb.yaml":      yttBomb,
		"tenants/team-b/profiles/loop.yaml":  tenantProfile("loop", "    jsonnet: {path: tenants/team-b/loop/main.jsonnet}\n"),
		"tenants/team-b/profiles/bomb.yaml":  tenantProfile("bomb", "    ytt: {paths: [tenants/team-b/bomb/bomb.yaml]}\n"),
		"tenants/team-b/profiles/oci-1.yaml": tenantProfile("oci-1", oci("127.0.0.1:5000")),
		"tenants/team-b/profiles/oci-2.yaml": tenantProfile("oci-2", oci("[::ffff:127.0.0.1]:5000")),
		"tenants/team-b/profiles/oci-3.yaml": tenantProfile("oci-3", oci("localhost:5000")),
		"tenants/team-b/profiles/oci-4.yaml": tenantProfile("oci-4", oci("169.254.169.254")),
	}
	dir := tenantFleet(t, files)
	start := time.Now()
	code, stdout, stderr := run(t, "validate", "--program-render-timeout", "3s", "--program-render-max-memory", "256Mi", dir)
	took := time.Since(start)
	if code != 1 {
		t.Errorf("exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	if took > time.Minute {
		t.Errorf("validate took %s", took)
	}
	for _, want := range [][]string{
		{"tenants/team-b/loop/main.jsonnet", "stopped at a limit", "ran longer than 3s"},
		{"tenants/team-b/bomb/bomb.yaml", "stopped at a limit", "used more than 256 MiB of memory"},
		{"tenants/team-b/profiles/oci-1.yaml:10: spec.addons[0].oci: ", "127.0.0.1 is a loopback address", "refused by the URL policy"},
		{"tenants/team-b/profiles/oci-2.yaml:10: spec.addons[0].oci: ", "127.0.0.1 is a loopback address", "refused by the URL policy"},
		{"tenants/team-b/profiles/oci-3.yaml:10: spec.addons[0].oci: ", "host localhost is internal", "refused by the URL policy"},
		{"tenants/team-b/profiles/oci-4.yaml:10: spec.addons[0].oci: ", "169.254.169.254 is a link-local address", "refused by the URL policy"},
	} {
		if lineWith(stdout, want...) == "" {
			t.Errorf("no line with %q in:\n%s", want, stdout)
		}
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "warning: ") && strings.Contains(line, "team-b") {
			t.Errorf("a hostile input passed as a warning: %s", line)
		}
	}
	t.Logf("validate exited %d after %s", code, took.Round(time.Millisecond))
}

// TestValidateProgramBoundsAreRenders: validate takes render's program
// bound flags with render's defaults.
func TestValidateProgramBoundsAreRenders(t *testing.T) {
	flagsOf := func(cmd *cobra.Command) map[string]string {
		out := map[string]string{}
		for _, name := range []string{"program-render-timeout", "program-render-max-memory", "program-render-in-process", "helm-render-timeout", "helm-render-max-memory", "allow-url-prefix", "helm-plain-http"} {
			if f := cmd.Flags().Lookup(name); f != nil {
				out[name] = f.DefValue + " " + f.Value.Type()
			}
		}
		return out
	}
	v := flagsOf(newValidateCommand(nil, nil))
	r := flagsOf(newRenderCommand(nil, nil))
	if fmt.Sprint(v) != fmt.Sprint(r) || len(v) != 7 {
		t.Errorf("validate's flags %v, render's %v", v, r)
	}
}

// lineWith returns the first line of out holding every part ("" if none).
func lineWith(out string, parts ...string) string {
	for _, line := range strings.Split(out, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return line
		}
	}
	return ""
}

// TestValidateErrsWhereRenderRefuses: each class of tenant render failure
// that validate used to print as a warning with exit 0 is an error, at its
// file, as `regatta render` refuses it ("What keeps a revision out"); what
// validate cannot check offline (a remote chart, a cluster label only the
// cluster gives) stays a warning.
func TestValidateErrsWhereRenderRefuses(t *testing.T) {
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: team-b}\n"
	jsonnet := func(body string) map[string]string {
		return map[string]string{
			"tenants/team-b/j/main.jsonnet":  body,
			"tenants/team-b/profiles/j.yaml": tenantProfile("j", "    jsonnet: {path: tenants/team-b/j/main.jsonnet}\n"),
		}
	}
	ytt := func(body string) map[string]string {
		return map[string]string{
			"tenants/team-b/y/cm.yaml":       body,
			"tenants/team-b/profiles/y.yaml": tenantProfile("y", "    ytt: {paths: [tenants/team-b/y]}\n"),
		}
	}
	tests := []struct {
		name  string
		files map[string]string
		want  []string // parts of one line
	}{
		{"jsonnet import outside the folder", jsonnet("{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'x', namespace: 'team-b'}, data: {x: importstr '../../../clusters/east/cluster.yaml'}}\n"),
			[]string{"tenants/team-b/j/main.jsonnet:1"}},
		{"jsonnet native function", jsonnet("std.native('exec')('id')\n"), []string{"tenants/team-b/j/main.jsonnet:1"}},
		{"jsonnet error", jsonnet("error 'boom'\n"), []string{"tenants/team-b/j/main.jsonnet:1", "boom"}},
		{"ytt load outside the folder", ytt("#@ load(\"../../../platform/x.star\", \"x\")\n" + cm), []string{"tenants/team-b/y/cm.yaml"}},
		{"ytt data.read of a host file", ytt("#@ load(\"@ytt:data\", \"data\")\n" + cm + "data:\n  x: #@ data.read(\"/etc/passwd\")\n"), []string{"tenants/team-b/y/cm.yaml"}},
		{"ytt failure", ytt("#@ load(\"@ytt:assert\", \"assert\")\n#@ assert.fail(\"boom\")\n" + cm), []string{"tenants/team-b/y/cm.yaml", "boom"}},
		{"kustomization without its resource", map[string]string{"tenants/team-b/api/kustomization.yaml": "resources: [config.yaml, missing.yaml]\n"},
			[]string{"tenants/team-b/api/kustomization.yaml", "missing.yaml"}},
		{"chart that fails", map[string]string{
			"tenants/team-b/chart/Chart.yaml":        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
			"tenants/team-b/chart/templates/cm.yaml": "{{ fail \"boom\" }}\n",
			"tenants/team-b/profiles/c.yaml":         tenantProfile("c", "    helm: {path: tenants/team-b/chart, chartVersion: 0.1.0, releaseNamespace: team-b}\n"),
		}, []string{"tenants/team-b/chart/templates/cm.yaml", "boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tenantFleet(t, tt.files)
			code, stdout, stderr := run(t, "validate", dir)
			if line := lineWith(stdout, tt.want...); code != 1 || line == "" || strings.HasPrefix(line, "warning: ") {
				t.Errorf("validate: exit %d, want 1 and an error with %q in:\n%s%s", code, tt.want, stdout, stderr)
			}
			if code, _, stderr := run(t, "render", "--cluster", "west", dir); code != 1 {
				t.Errorf("render takes what validate refuses: exit %d\n%s", code, stderr)
			}
		})
	}
	t.Run("offline only", func(t *testing.T) {
		dir := tenantFleet(t, map[string]string{
			"tenants/team-b/profiles/r.yaml": tenantProfile("r", "    helm: {repositoryURL: 'https://charts.example.com', chartName: api, chartVersion: 1.0.0, releaseNamespace: team-b}\n"),
			"tenants/team-b/profiles/l.yaml": tenantProfile("l", "    kustomize: {path: 'tenants/team-b/{{ .Cluster.Labels.region }}'}\n"),
		})
		code, stdout, stderr := run(t, "validate", dir)
		if code != 0 || lineWith(stdout, "warning: ", "not checked offline", "charts.example.com") == "" ||
			lineWith(stdout, "warning: ", "not checked offline", "region") == "" {
			t.Errorf("exit %d, want 0 and two warnings:\n%s%s", code, stdout, stderr)
		}
	})
}

// TestValidateAllowsListedRegistry: a registry on loopback that
// --allow-url-prefix names (as oci://, or as http:// with
// --helm-plain-http, as the daemon is configured) is not refused by
// validate: its artifact is only not checked offline.
func TestValidateAllowsListedRegistry(t *testing.T) {
	dir := tenantFleet(t, map[string]string{"tenants/team-b/profiles/oci.yaml": tenantProfile("oci",
		"    oci: {url: 'oci://127.0.0.1:5000/fleet/app', tag: stable}\n    kustomize: {path: .}\n")})
	for _, flags := range [][]string{
		{"--allow-url-prefix", "oci://127.0.0.1:5000/"},
		{"--allow-url-prefix", "http://127.0.0.1:5000/", "--helm-plain-http"},
	} {
		code, stdout, stderr := run(t, append(append([]string{"validate"}, flags...), dir)...)
		if code != 0 || lineWith(stdout, "warning: tenants/team-b/profiles/oci.yaml:10: ", "not checked offline", "127.0.0.1:5000") == "" {
			t.Errorf("%v: exit %d, want 0 and a warning\n%s%s", flags, code, stdout, stderr)
		}
	}
}
