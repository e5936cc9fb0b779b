package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestRedactPair(t *testing.T) {
	old := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "labels": map[string]any{"a": "b"}},
		"data": map[string]any{"same": "AAA", "changed": "BBB", "gone": "CCC"}}
	cur := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "labels": map[string]any{"a": "c"}},
		"data": map[string]any{"same": "AAA", "changed": "DDD", "new": "EEE"}}
	a, b, changed := redactPair(old, cur, redactSecret)
	if !reflect.DeepEqual(changed, []string{"data.changed", "data.gone", "data.new"}) {
		t.Errorf("changed = %v", changed)
	}
	wantB := map[string]any{"same": Redacted, "changed": RedactedChanged, "new": RedactedChanged}
	if !reflect.DeepEqual(b["data"], wantB) || a["data"].(map[string]any)["gone"] != Redacted {
		t.Errorf("redacted: %v / %v", a["data"], b["data"])
	}
	if b["metadata"].(map[string]any)["labels"].(map[string]any)["a"] != "c" {
		t.Error("a Secret's labels are not secret")
	}
	_, b, changed = redactPair(old, cur, redactAll)
	if b["metadata"].(map[string]any)["name"] != "s" || b["metadata"].(map[string]any)["labels"].(map[string]any)["a"] != RedactedChanged ||
		!reflect.DeepEqual(changed, []string{"data.changed", "data.gone", "data.new", "metadata.labels.a"}) {
		t.Errorf("redactAll: %v %v", b, changed)
	}
	if old["data"].(map[string]any)["changed"] != "BBB" {
		t.Error("redactPair changed its input")
	}
}

func TestSecretValuesNeverWritten(t *testing.T) {
	base := fleetFiles(2)
	head := edit(base, map[string]string{"ops/secret.yaml": strings.Replace(base["ops/secret.yaml"], "first-secret-value", "second-secret-value", 1)})
	rep := compare(t, nil, base, head)
	obj := rep.Groups[0].Profiles[0].Objects[0]
	if obj.Kind != "Secret" || !reflect.DeepEqual(obj.RedactedKeys, []string{"stringData.token"}) || !strings.Contains(obj.Diff, "+  token: (redacted, changed)") {
		t.Fatalf("object = %+v", obj)
	}
	for _, format := range []string{FormatText, FormatMarkdown, FormatJSON} {
		var b bytes.Buffer
		if err := Write(&b, rep, WriteOptions{Format: format}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "secret-value") {
			t.Errorf("%s holds a secret value:\n%s", format, b.String())
		}
	}
}

func TestSOPSSourcedObjectsAreRedacted(t *testing.T) {
	base := fleetFiles(2)
	enc := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: enc, namespace: ops}\ndata: {k: %s}\nsops:\n  mac: ENC[AES256_GCM,data:x]\n  version: 3.13.3\n"
	base["ops/enc.yaml"] = fmt.Sprintf(enc, "one")
	head := edit(base, map[string]string{"ops/enc.yaml": fmt.Sprintf(enc, "two")})
	c := &comparison{base: newSide(loadSide(t, "b", base)), head: newSide(loadSide(t, "h", head))}
	if !c.head.sops.encrypted("ops/enc.yaml") || c.head.sops.encrypted("ops/ns.yaml") {
		t.Fatal("SOPS detection")
	}
	ro := rendered{addon: "ops"}
	ro.Source = "ops/enc.yaml"
	if !c.head.sensitive("ops", ro) {
		t.Error("an object read from a SOPS file is sensitive")
	}
	ro.Source = "ops/ns.yaml"
	if c.head.sensitive("ops", ro) {
		t.Error("a plain manifest is not sensitive")
	}
	ro.Source = "ops"
	if !c.head.sensitive("ops", ro) {
		t.Error("a generated object of an add-on with SOPS files is sensitive")
	}
}

func TestWriteMarkdownBudget(t *testing.T) {
	r := NewReport(Rev{"base", "b"}, Rev{"head", "h"})
	r.Summary = Summary{Clusters: 40, ClustersAffected: 40, Updated: 40, Changed: true}
	diff := strings.Repeat("-  a: 1\n+  a: 2\n", 100)
	for i := range 40 {
		r.Groups = append(r.Groups, Group{ID: fmt.Sprint(i), Clusters: []string{fmt.Sprintf("c%02d", i)},
			Profiles: []ProfileChange{{Profile: "p", Change: ProfileUpdated, Counts: Counts{Updated: 1},
				Objects: []ObjectChange{{Action: ActionUpdated, APIVersion: "v1", Kind: "ConfigMap", Name: "x", Diff: diff}}}}})
	}
	var b bytes.Buffer
	if err := Write(&b, r, WriteOptions{Format: FormatMarkdown, MaxBytes: 10000}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if len(out) > 10000+40*200 || !strings.Contains(out, "Some diffs are left out") || strings.Count(out, "<details>") != 40 ||
		!strings.Contains(out, "```diff") {
		t.Errorf("%d bytes, %d groups:\n%s", len(out), strings.Count(out, "<details>"), out[:min(len(out), 2000)])
	}
}

func TestWriteMarkdownGroupsManyClusters(t *testing.T) {
	base := fleetFiles(60)
	head := edit(base, map[string]string{"ops/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: ops, labels: {a: b}}\n"})
	var b bytes.Buffer
	if err := Write(&b, compare(t, nil, base, head), WriteOptions{Format: FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Count(out, "<details>") != 1 || !strings.Contains(out, "c00, c02, c04, c06, c08, and 25 more (30 clusters)") ||
		!strings.Contains(out, "Clusters: c00, c02,") {
		t.Errorf("markdown:\n%s", out)
	}
}

func TestWriteJSONIsStable(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, &Report{SchemaVersion: SchemaVersion}, WriteOptions{Format: FormatJSON}); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"errors", "warnings", "groups"} {
		if _, ok := m[k].([]any); !ok {
			t.Errorf("%s is %v, want a list", k, m[k])
		}
	}
	if err := Write(&b, &Report{}, WriteOptions{Format: "xml"}); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestWriteTextColors(t *testing.T) {
	base := fleetFiles(2)
	rep := compare(t, nil, base, edit(base, map[string]string{"profiles/ops.yaml": ""}))
	var plain, colored bytes.Buffer
	Write(&plain, rep, WriteOptions{})
	Write(&colored, rep, WriteOptions{Color: true})
	if strings.Contains(plain.String(), "\x1b[") || !strings.Contains(colored.String(), "\x1b[31m- Namespace/ops [ops]") {
		t.Errorf("plain:\n%s\ncolored:\n%q", plain.String(), colored.String())
	}
	if !strings.Contains(plain.String(), "! Namespace/ops is deleted on 1 cluster: everything in it is deleted too (c00)") {
		t.Errorf("no Namespace warning:\n%s", plain.String())
	}
}
