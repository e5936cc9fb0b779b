package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regatta-dev/regatta/reconciler/events"
	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/spec"
)

const planEvents = "testdata/plan/events"

// eventFleetFiles are the event profile of the plan test, as committed at
// base.
func eventFleetFiles(t *testing.T) map[string]string {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(planEvents, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return map[string]string{
		"events/https-services.yaml":                   read("https-services.yaml"),
		"profiles/https-netpol.yaml":                   read("https-netpol.yaml"),
		"event-addons/https-netpol/networkpolicy.yaml": read("networkpolicy.yaml"),
	}
}

func eventService(name string, port int64, withStatus bool) map[string]any {
	o := map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "namespace": "eng", "resourceVersion": "17", "uid": "u-" + name},
		"spec":     map[string]any{"selector": map[string]any{"app": name}, "ports": []any{map[string]any{"port": port}}}}
	if withStatus {
		o["status"] = map[string]any{"loadBalancer": map[string]any{}}
	}
	return o
}

// recordInstances records the instances of the Services on a cluster as
// the daemon does: deterministic names, the base rendering's hash.
func recordInstances(t *testing.T, dir, cluster string, svcs ...map[string]any) []status.EventInstance {
	fleet, diags := spec.Load(os.DirFS(dir))
	if len(diags.Errors()) > 0 {
		t.Fatal(diags.Errors())
	}
	prof := fleet.Profile("https-netpol")
	r := render.New(render.Options{})
	var out []status.EventInstance
	for _, in := range events.Instances(true, []events.Matches{{Cluster: cluster, Objects: svcs}}) {
		res, err := r.Render(context.Background(), render.Request{FS: os.DirFS(dir), Profile: prof,
			Cluster: render.ClusterFacts{Name: cluster, KubernetesVersion: "v1.37.2"},
			Event:   &render.EventData{Name: in.Name, SourceCluster: cluster, Resource: in.Object}})
		if err != nil {
			t.Fatal(err)
		}
		var objs []string
		for _, st := range res.Steps {
			for _, o := range st.Objects {
				objs = append(objs, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
			}
		}
		out = append(out, status.EventInstance{Name: in.Name, SourceCluster: cluster, Resource: in.Resource,
			Objects: objs, Event: status.NewEventRecord(in.Object, nil, res.Hash)})
	}
	return out
}

// TestPlanEventInstances: a change to an event profile's template is
// shown per instance recorded on the status branch, each re-rendered from
// its recorded resource; a record without its resource (an older
// regatta's) is named, not guessed.
func TestPlanEventInstances(t *testing.T) {
	dir := t.TempDir()
	copyFleet(t, dir)
	writeSOPS(t, dir, sopsBase)
	writePlanFiles(t, dir, eventFleetFiles(t))
	planGit(t, dir, "init", "-q", "-b", "main")
	planGit(t, dir, "add", "-A")
	planGit(t, dir, "commit", "-qm", "base")
	prod1 := recordInstances(t, dir, "prod-1", eventService("web", 443, false), eventService("api", 8443, true))
	legacy := recordInstances(t, dir, "prod-1", eventService("old", 443, false))[0]
	legacy.Event = nil
	prod2 := recordInstances(t, dir, "prod-2", eventService("web", 443, false))
	snap := status.Snapshot{Clusters: []status.ClusterStatus{
		{Cluster: "prod-1", Reachable: true, KubernetesVersion: "v1.37.2", Profiles: []status.Profile{
			{Name: "https-netpol", State: status.StateApplied, Objects: 3, EventInstances: append(prod1, legacy)}}},
		{Cluster: "prod-2", Reachable: true, KubernetesVersion: "v1.37.2", Profiles: []status.Profile{
			{Name: "https-netpol", State: status.StateApplied, Objects: 1, EventInstances: prod2}}},
	}}
	statusRev := addStatusBranch(t, dir, snap)
	tpl := "event-addons/https-netpol/networkpolicy.yaml"
	head := strings.Replace(eventFleetFiles(t)[tpl], "policyTypes: [Ingress]", "policyTypes: [Ingress, Egress]", 1)
	writePlanFiles(t, dir, map[string]string{tpl: head})
	planGit(t, dir, "commit", "-qam", "head")
	var pairs []string
	for sha, name := range map[string]string{statusRev: "STATUS", revParse(t, dir, "HEAD~1"): "BASE", revParse(t, dir, "HEAD"): "HEAD"} {
		pairs = append(pairs, sha, name+"-REVISION", sha[:8], name)
	}
	revs := strings.NewReplacer(pairs...)
	for _, format := range []string{"text", "markdown", "json"} {
		code, stdout, stderr := run(t, "plan", "--base", "HEAD~1", "--sops-age-key-file", planAgeKey, "-o", format, dir)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s%s", format, code, stdout, stderr)
		}
		checkGolden(t, "event-instances."+map[string]string{"text": "txt", "markdown": "md", "json": "json"}[format], revs.Replace(stdout))
	}
	planGit(t, dir, "rm", "-q", "profiles/https-netpol.yaml")
	planGit(t, dir, "commit", "-qm", "drop the profile")
	_, stdout, _ := run(t, "plan", "--base", "HEAD~2", "--sops-age-key-file", planAgeKey, "--color", "never", dir)
	for _, want := range []string{"profile https-netpol: lost (+0 ~0 -3)", "- NetworkPolicy/eng/https-web-", "- NetworkPolicy/eng/https-api-"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("withdrawal plan lacks %q:\n%s", want, stdout)
		}
	}
}

// TestEventRecordOmits: what an event record writes into Git holds no
// Secret value, no status and none of the fields every write changes, and
// the watch cache's object is not changed.
func TestEventRecordOmits(t *testing.T) {
	sec := map[string]any{"apiVersion": "v1", "kind": "Secret", "data": map[string]any{"password": "c2VjcmV0"},
		"stringData": map[string]any{"token": "t0ken"}, "type": "Opaque",
		"metadata": map[string]any{"name": "db", "namespace": "eng", "resourceVersion": "5", "managedFields": []any{},
			"annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{\"data\":{\"password\":\"c2VjcmV0\"}}", "team": "x"}}}
	rec := status.NewEventRecord(sec, []any{eventService("web", 443, true)}, "h")
	files, err := status.Files(status.Snapshot{Clusters: []status.ClusterStatus{{Cluster: "c", Profiles: []status.Profile{
		{Name: "p", EventInstances: []status.EventInstance{{Name: "i", Event: rec}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	out := string(files[status.ClusterFile("c")])
	for _, leak := range []string{"c2VjcmV0", "t0ken", "resourceVersion:", "managedFields:", "last-applied-configuration:", "loadBalancer"} {
		if strings.Contains(out, leak) {
			t.Errorf("the status file holds %q:\n%s", leak, out)
		}
	}
	for _, kept := range []string{"team: x", "type: Opaque", "name: db", "port: 443", "format: 1"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the status file lacks %q:\n%s", kept, out)
		}
	}
	if _, ok := sec["data"]; !ok || len(sec["metadata"].(map[string]any)["annotations"].(map[string]any)) != 2 {
		t.Error("NewEventRecord changed the object it recorded")
	}
	if got := rec.OmittedText(); got != "data, metadata.annotations.kubectl.kubernetes.io/last-applied-configuration, metadata.managedFields, metadata.resourceVersion, status, stringData" {
		t.Errorf("omitted %q", got)
	}
}
