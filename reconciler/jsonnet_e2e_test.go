package reconciler

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/regatta-dev/regatta/reconciler/status"
	"github.com/regatta-dev/regatta/render"
	"github.com/regatta-dev/regatta/render/sandbox"
)

// serveSandboxWorker makes this test binary a program render worker when
// it was started as one (see programWorkers) and exits.
func serveSandboxWorker() {
	if os.Getenv(sandbox.WorkerEnv) == "" {
		return
	}
	if err := sandbox.Serve(os.Stdin, os.Stdout, render.WorkerHandlers(), time.Minute); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// programWorkers evaluates Jsonnet in workers started from this binary.
func programWorkers(t *testing.T, timeout time.Duration) *sandbox.Pool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := sandbox.New(sandbox.Options{Command: []string{exe}, Env: []string{sandbox.WorkerEnv + "=1"}, Timeout: timeout})
	t.Cleanup(p.Close)
	return p
}

const jsonnetFacts = `local r = std.extVar('regatta');
local lib = import 'facts.libsonnet';
[lib.configMap('jsonnet-facts', {
  cluster: r.cluster.name,
  env: r.cluster.labels.env,
  greeting: r.cluster.values.greeting,
  version: r.cluster.kubernetesVersion,
  team: std.extVar('team'),
})]
`

const yttFacts = `#@ load("@ytt:data", "data")
#@ c = data.values.regatta.cluster
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ytt-facts
  namespace: default
data:
  cluster: #@ c.name
  env: #@ c.labels["env"]
  greeting: #@ c.values["greeting"]
  version: #@ c.kubernetesVersion
  team: #@ data.values.team
`

// TestJsonnetAddonPerCluster runs a Jsonnet and a ytt add-on through the
// daemon on two real clusters: each gets the objects the program and the
// templates build from its own name, labels, values and Kubernetes
// version. A program that loops fails
// its own pair within the worker's deadline, with its file; the others
// are applied; the commit that fixes it is applied.
func TestJsonnetAddonPerCluster(t *testing.T) {
	ctx := context.Background()
	loop := "local f(n) = if n < 0 then 0 else f(n + 1) tailstrict; f(0)"
	files := map[string]string{
		"profiles/facts.yaml": profileYAML("facts", "fleet: jsonnet", "  addons:\n  - name: facts\n    jsonnet: {path: mon/main.jsonnet, jpath: [mon/vendor], extVars: {team: obs}}\n"),
		"mon/main.jsonnet":    jsonnetFacts,
		"mon/vendor/facts.libsonnet": "{ configMap(name, data):: { apiVersion: 'v1', kind: 'ConfigMap', " +
			"metadata: { name: name, namespace: 'default' }, data: data } }\n",
		"profiles/loop.yaml":     profileYAML("loop", "fleet: jsonnet", "  addons:\n  - name: loop\n    jsonnet: {path: loop/main.jsonnet}\n"),
		"loop/main.jsonnet":      loop,
		"profiles/yfacts.yaml":   profileYAML("yfacts", "fleet: jsonnet", "  addons:\n  - name: yfacts\n    ytt: {paths: [ycfg/config], valuesFiles: [ycfg/team.yml]}\n"),
		"ycfg/config/cm.yml":     yttFacts,
		"ycfg/config/values.yml": "#@data/values\n---\nteam: none\n",
		"ycfg/team.yml":          "team: obs\n",
	}
	f := newFleetRepo(t)
	for c, labels := range map[string]string{"c36": "fleet: jsonnet, env: staging", "c37": "fleet: jsonnet, env: prod"} {
		for k, v := range clusterFiles(t, c, labels) {
			files[k] = v
		}
	}
	f.Commit("fleet", files)
	h := newHarness(t, f, func(o *DaemonOptions) { o.StatusBranch = "" })
	h.r.opts.Renderer = render.New(render.Options{Sandbox: programWorkers(t, time.Second)})
	start := time.Now()
	res, _ := h.d.RunOnce(ctx)
	if elapsed := time.Since(start); elapsed > time.Minute {
		t.Errorf("the pass took %s", elapsed)
	}
	want := map[string]map[string]string{
		"c36": {"cluster": "c36", "env": "staging", "greeting": "hello-c36", "version": "v1.36.3", "team": "obs"},
		"c37": {"cluster": "c37", "env": "prod", "greeting": "hello-c37", "version": "v1.37.2", "team": "obs"},
	}
	for c, data := range want {
		got := pairs(res, c)
		if got["facts"].State != status.StateApplied {
			t.Fatalf("%s facts: %s %+v", c, got["facts"].State, got["facts"].Error)
		}
		if got["yfacts"].State != status.StateApplied {
			t.Fatalf("%s yfacts: %s %+v", c, got["yfacts"].State, got["yfacts"].Error)
		}
		for _, name := range []string{"jsonnet-facts", "ytt-facts"} {
			cm := configMap(t, c, "default", name)
			for k, v := range data {
				if cm[k] != v {
					t.Errorf("%s %s: data[%s] = %q, want %q", c, name, k, cm[k], v)
				}
			}
		}
		e := got["loop"].Error
		if got["loop"].State != status.StateFailed || e == nil || e.File != "loop/main.jsonnet" ||
			!strings.Contains(e.Message, "ran longer than 1s") {
			t.Errorf("%s loop: %s %+v, want Failed at loop/main.jsonnet", c, got["loop"].State, e)
		}
	}
	f.Commit("fix the loop", map[string]string{"loop/main.jsonnet": "{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'jsonnet-fixed', namespace: 'default' } }\n"})
	res, _ = h.d.RunOnce(ctx)
	for c := range want {
		if got := pairs(res, c); got["loop"].State != status.StateApplied || configMapObj(t, c, "default", "jsonnet-fixed") == nil {
			t.Errorf("%s: after the fix, loop: %s %+v", c, got["loop"].State, got["loop"].Error)
		}
	}
}
