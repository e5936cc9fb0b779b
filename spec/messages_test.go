package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

const msgCluster = `apiVersion: regatta.dev/v1alpha1
kind: Cluster
metadata:
  name: c1
  labels: {env: prod}
spec:
  kubeconfig:
    secretRef: {name: c1-kubeconfig, namespace: fleet-system, key: value}
`

const msgProfile = `apiVersion: regatta.dev/v1alpha1
kind: Profile
metadata:
  name: p
spec:
  clusterSelector: {matchLabels: {env: prod}}
  addons:
  - name: a
    manifests:
      path: m
`

func aliasBombValues() string {
	var b strings.Builder
	b.WriteString("      values:\n        a: &a [x, x, x, x, x, x, x, x, x]\n")
	for i, c := range "bcdefg" {
		prev := string(rune('a' + i))
		b.WriteString("        " + string(c) + ": &" + string(c) + " [")
		b.WriteString(strings.TrimSuffix(strings.Repeat("*"+prev+", ", 9), ", ") + "]\n")
	}
	return b.String()
}

// TestMessages checks the exact message of inputs that used to get a
// vague or wrong one.
func TestMessages(t *testing.T) {
	helm := strings.Replace(msgProfile, "    manifests:\n      path: m\n",
		"    helm:\n      repositoryURL: https://charts.example.com/\n      chartName: x\n      chartVersion: 1.0.0\n", 1)
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{{
		name:  "mis-indented key: the line of the key, not of the block above",
		files: map[string]string{"profiles/p.yaml": msgProfile + "   bad: 1\n"},
		want:  "profiles/p.yaml:11: invalid YAML: did not find expected key (in the node that starts on line 6)",
	}, {
		name:  "unclosed flow sequence",
		files: map[string]string{"profiles/p.yaml": strings.Replace(msgProfile, "{env: prod}}", "{env: [prod}}", 1)},
		want:  "profiles/p.yaml:6: invalid YAML: did not find expected ',' or ']'",
	}, {
		name:  "unterminated quote: where it starts",
		files: map[string]string{"profiles/p.yaml": strings.Replace(msgProfile, "path: m", "path: 'm", 1) + "  tier: 5\n"},
		want:  "profiles/p.yaml:10: invalid YAML: found unexpected end of stream",
	}, {
		name:  "control character",
		files: map[string]string{"profiles/p.yaml": strings.Replace(msgProfile, "name: a", "name: a\x01", 1)},
		want:  "profiles/p.yaml:8: invalid YAML: column 12: control character U+0001 is not allowed in YAML (write it as an escape, e.g. \"\\x01\", in a double-quoted string)",
	}, {
		name:  "invalid UTF-8",
		files: map[string]string{"profiles/p.yaml": strings.Replace(msgProfile, "path: m", "path: m\xff", 1)},
		want:  "profiles/p.yaml:10: invalid YAML: column 14: invalid UTF-8 byte 0xff",
	}, {
		name:  "alias bomb in values",
		files: map[string]string{"profiles/p.yaml": helm + aliasBombValues()},
		want:  "profiles/p.yaml:15: spec.addons[0].helm.values: YAML aliases expand to too much data (an alias bomb?): expand the anchors you need and remove the others",
	}, {
		name: "100k-character label key",
		files: map[string]string{"clusters/c1/cluster.yaml": strings.Replace(msgCluster, "  labels: {env: prod}\n",
			"  labels:\n    env: prod\n    "+strings.Repeat("k", 100000)+": v\n", 1)},
		want: "clusters/c1/cluster.yaml:7: invalid YAML: a key of 100000 characters: YAML keys may have at most 1024 (a Kubernetes label or annotation key at most 317: a 253-character prefix, '/', a 63-character name)",
	}, {
		name:  "folder named like a profile file",
		files: map[string]string{"profiles/x.yaml/p.yaml": msgProfile},
		want:  "profiles/x.yaml: a folder: profiles are files directly in profiles/ (profiles/<name>.yaml)",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"clusters/c1/cluster.yaml": {Data: []byte(msgCluster)},
				"m/cm.yaml":                {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")},
			}
			for name, data := range tc.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			_, diags := Load(fsys)
			if got := formatDiags(diags.Errors()); !strings.Contains(got, tc.want+"\n") {
				t.Fatalf("got\n%s\nwant a line\n%s", got, tc.want)
			}
		})
	}
}

func TestMessagesPointer(t *testing.T) {
	for p, want := range map[string]string{
		"/spec/~2bad":   `"/spec/~2bad" is not a JSON pointer: ~ at offset 6 must be followed by 0 (for ~) or 1 (for /)`,
		"/spec/bad~":    `"/spec/bad~" is not a JSON pointer: ~ at offset 9 must be followed by 0 (for ~) or 1 (for /)`,
		"spec/replicas": `"spec/replicas" is not a JSON pointer: it starts with /, e.g. /spec/replicas`,
		"/a~1b/~0c":     "",
	} {
		prof := msgProfile + "  driftExclusions:\n  - paths: [\"" + p + "\"]\n"
		_, diags := Load(fstest.MapFS{
			"clusters/c1/cluster.yaml": {Data: []byte(msgCluster)},
			"m/cm.yaml":                {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")},
			"profiles/p.yaml":          {Data: []byte(prof)},
		})
		got := formatDiags(diags.Errors())
		if want == "" && got != "" || want != "" && got != "profiles/p.yaml:12: spec.driftExclusions[0].paths[0]: "+want+"\n" {
			t.Errorf("%s: got %q, want %q", p, got, want)
		}
	}
}

// TestMessagesSymlinkInManifests: validate catches a link out of the
// repository inside a manifests or kustomize folder, not only rendering.
func TestMessagesSymlinkInManifests(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"clusters/c1/cluster.yaml": msgCluster,
		"m/cm.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		"k/kustomization.yaml":     "resources: [cm.yaml]\n",
		"k/cm.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\n",
		"profiles/p.yaml":          msgProfile,
		"profiles/k.yaml":          strings.NewReplacer("name: p", "name: k", "manifests:\n      path: m", "kustomize:\n      path: k").Replace(msgProfile),
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, link := range []string{"m/sub/passwd.yaml", "k/passwd.yaml"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/etc/passwd", filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	_, diags := loadDir(t, dir)
	got := formatDiags(diags.Errors())
	want := "profiles/k.yaml:10: spec.addons[0].kustomize.path: \"k/passwd.yaml\": symlink k/passwd.yaml points outside: path leaves the repository\n" +
		"profiles/p.yaml:10: spec.addons[0].manifests.path: \"m/sub/passwd.yaml\": symlink m/sub/passwd.yaml points outside: path leaves the repository\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
