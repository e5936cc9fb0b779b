package controllerse2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regatta-dev/regatta/internal/testenv"
	"github.com/regatta-dev/regatta/reconciler/status"
)

const workloadsNS = "workloads"

// The workloads profile: a StatefulSet behind a headless Service, a
// DaemonSet (one Pod per kwok node) and a Job that completes.
var workloads = map[string]string{
	"workloads/ns.yaml": namespace(workloadsNS),
	"workloads/statefulset.yaml": `apiVersion: v1
kind: Service
metadata: {name: db, namespace: workloads}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{port: 5432}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: workloads}
spec:
  serviceName: db
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "postgres:17"}]
`,
	"workloads/daemonset.yaml": `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: workloads}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "fluent-bit:3.2"}]
`,
	"workloads/job.yaml": `apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: workloads}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: "migrate:1"}]
`,
}

// TestWorkloadHealth: StatefulSet, DaemonSet and Job are judged by the
// built-in health as Argo CD judges them, from the status their real
// controllers write: ready ones make their profile Applied; a Job whose
// Pod fails makes its profile Failed at once (not at its health timeout),
// naming the Job; a DaemonSet whose Pods never become ready keeps its
// profile Progressing.
func TestWorkloadHealth(t *testing.T) {
	files := map[string]string{
		"profiles/workloads.yaml":   profile("workloads", "stage: prod", "workloads", ""),
		"profiles/failing-job.yaml": profile("failing-job", "stage: prod", "failing-job", "  dependsOn: [workloads]\n  healthTimeout: 5m\n"),
		"failing-job/job.yaml": `apiVersion: batch/v1
kind: Job
metadata: {name: doomed, namespace: workloads}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: doomed, image: "registry.test/crash:1"}]
`,
		"profiles/stuck-agent.yaml": profile("stuck-agent", "stage: prod", "stuck-agent", "  dependsOn: [workloads]\n  healthTimeout: 5m\n"),
		"stuck-agent/daemonset.yaml": `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: stuck-agent, namespace: workloads}
spec:
  selector: {matchLabels: {app: stuck-agent}}
  template:
    metadata:
      labels: {app: stuck-agent}
      annotations: {testenv.regatta.dev/behavior: never-ready}
    spec:
      containers: [{name: agent, image: "fluent-bit:3.2"}]
`,
	}
	for k, v := range workloads {
		files[k] = v
	}
	f := newFleet(t, files, prod)
	start := time.Now()
	startDaemon(t, f, daemonOptions{healthTimeout: 5 * time.Minute})

	p := f.waitPair(t, 90*time.Second, prod, "workloads", status.StateApplied)
	t.Logf("workloads: %s %q", p.State, p.Message)
	checkWorkloadsReady(t)

	failed := f.waitPair(t, 60*time.Second, prod, "failing-job", status.StateFailed)
	if !strings.Contains(failed.Message+errorMessage(failed), "Job/workloads/doomed") {
		t.Errorf("failing-job's record does not name the Job: %q %+v", failed.Message, failed.Error)
	}
	if took := time.Since(start); took > 4*time.Minute {
		t.Errorf("failing-job failed after %s: by its health timeout, not by the Job's failure", took)
	}

	stuck := f.waitPair(t, 30*time.Second, prod, "stuck-agent", status.StateProgressing)
	testenv.Consistently(t, 3*time.Second, func(context.Context) error {
		if p := f.pair(t, prod, "stuck-agent"); p.State != status.StateProgressing {
			return fmt.Errorf("stuck-agent: %s %q, want Progressing", p.State, p.Message)
		}
		return nil
	})
	if !strings.Contains(stuck.Message, "DaemonSet/workloads/stuck-agent") {
		t.Errorf("stuck-agent's record does not name the DaemonSet: %q", stuck.Message)
	}
}

// checkWorkloadsReady checks, from the API server, that the controllers
// really made the workloads ready.
func checkWorkloadsReady(t *testing.T) {
	t.Helper()
	cs := clientset(t, prod)
	ctx := t.Context()
	sts, err := cs.AppsV1().StatefulSets(workloadsNS).Get(ctx, "db", metav1.GetOptions{})
	if err != nil || sts.Status.ReadyReplicas != 2 {
		t.Errorf("StatefulSet db: %v %+v, want 2 ready replicas", err, sts.Status)
	}
	ds, err := cs.AppsV1().DaemonSets(workloadsNS).Get(ctx, "agent", metav1.GetOptions{})
	if err != nil || ds.Status.NumberReady != 2 || ds.Status.DesiredNumberScheduled != 2 {
		t.Errorf("DaemonSet agent: %v %+v, want 2 of 2 ready (one per node)", err, ds.Status)
	}
	job, err := cs.BatchV1().Jobs(workloadsNS).Get(ctx, "migrate", metav1.GetOptions{})
	if err != nil || job.Status.Succeeded != 1 {
		t.Errorf("Job migrate: %v %+v, want 1 succeeded", err, job.Status)
	}
}

func errorMessage(p status.Profile) string {
	if p.Error == nil {
		return ""
	}
	return p.Error.Object + " " + p.Error.Message
}
