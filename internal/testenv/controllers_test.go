package testenv_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// ctlCluster is the controller-backed cluster of TestMain.
const ctlCluster = "ctl"

// settle bounds how long a workload may take to reach its state here. Most
// settle in seconds; on a loaded machine namespace deletion and garbage
// collection took over a minute.
const settle = 2 * time.Minute

func TestControllersReportCost(t *testing.T) {
	rss, err := env.Cluster(ctlCluster).ProcessRSS()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range rss {
		t.Logf("cluster %s: %s RSS %d MiB", ctlCluster, name, b>>20)
	}
}

// TestStreamingListIsRefusedAtOnce: a cluster with controllers refuses a
// streaming list (WatchList) when it is asked for, so that kwok's informers
// fall back to list and watch instead of retrying a watch that the API
// server ends (etcd 3.4 has no progress notifications) with a growing
// back-off, which made kwok see Pods late.
func TestStreamingListIsRefusedAtOnce(t *testing.T) {
	cs, ns := ctlNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	yes := true
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{SendInitialEvents: &yes, AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if err == nil {
		w.Stop()
		t.Fatal("a streaming list was accepted: kwok's informers would retry it with a back-off")
	}
	if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
		t.Fatalf("want the streaming list refused as invalid, got %v", err)
	}
}

func TestDeploymentBecomesAvailableThroughReplicaSetAndPods(t *testing.T) {
	cs, ns := ctlNamespace(t)
	createDeployment(t, cs, ns, "web", "nginx:1.27", 3)
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		return deploymentAvailable(ctx, cs, ns, "web", 3)
	})
	rs := ownedReplicaSets(t, cs, ns, "web")
	if len(rs) != 1 || rs[0].Status.ReadyReplicas != 3 {
		t.Fatalf("want one ReplicaSet with 3 ready replicas, got %d ReplicaSets: %+v", len(rs), rs)
	}
	pods := listPods(t, cs, ns)
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning || !podReady(&p) {
			t.Errorf("pod %s: node %q phase %s ready %v, want scheduled, Running and Ready",
				p.Name, p.Spec.NodeName, p.Status.Phase, podReady(&p))
		}
	}
	if len(pods) != 3 {
		t.Errorf("%d pods, want 3", len(pods))
	}
}

func TestCrashLoopingDeploymentNeverBecomesAvailable(t *testing.T) {
	cs, ns := ctlNamespace(t)
	d := createDeployment(t, cs, ns, "crasher", "registry.test/crash:v2", 2)
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		return podsCrashLooping(ctx, cs, ns, 2)
	})
	testenv.Consistently(t, 3*time.Second, func(ctx context.Context) error {
		got, err := cs.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got.Status.AvailableReplicas != 0 || deploymentCondition(got.Status.Conditions, "Available") == "True" {
			return fmt.Errorf("deployment %s became available: %+v", d.Name, got.Status)
		}
		return nil
	})
}

func TestNeverReadyPodsRunButAreNotReady(t *testing.T) {
	cs, ns := ctlNamespace(t)
	pod := newPod("probe-fails", "nginx:1.27")
	pod.Annotations = map[string]string{testenv.BehaviorAnnotation: testenv.BehaviorNeverReady}
	createPod(t, cs, ns, pod)
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning || podCondition(p.Status.Conditions, corev1.PodReady) != corev1.ConditionFalse {
			return fmt.Errorf("pod phase %s, Ready %q; want Running and Ready False", p.Status.Phase, podCondition(p.Status.Conditions, corev1.PodReady))
		}
		return nil
	})
}

func TestPodRequestingMoreThanANodeHasStaysPending(t *testing.T) {
	cs, ns := ctlNamespace(t)
	pod := newPod("too-big", "nginx:1.27")
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}
	createPod(t, cs, ns, pod)
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return nil
			}
		}
		return fmt.Errorf("pod %s not reported Unschedulable: %+v", p.Name, p.Status)
	})
	p, err := cs.CoreV1().Pods(ns).Get(t.Context(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" {
		t.Errorf("pod phase %s on node %q, want Pending and unscheduled", p.Status.Phase, p.Spec.NodeName)
	}
}

func TestJobCompletes(t *testing.T) {
	cs, ns := ctlNamespace(t)
	job := createJob(t, cs, ns, "once", "busybox:1.36", 0)
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		return jobCondition(ctx, cs, ns, job.Name, batchv1.JobComplete)
	})
}

func TestFailingJobFailsAfterBackoffLimit(t *testing.T) {
	cs, ns := ctlNamespace(t)
	job := createJob(t, cs, ns, "doomed", "registry.test/crash:1", 1)
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		return jobCondition(ctx, cs, ns, job.Name, batchv1.JobFailed)
	})
	got, err := cs.BatchV1().Jobs(ns).Get(t.Context(), job.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Failed != 2 {
		t.Errorf("job %s: %d failed pods, want 2 (backoffLimit 1)", job.Name, got.Status.Failed)
	}
}

func TestBackgroundDeletionOfADeploymentTakesItsReplicaSetsAndPods(t *testing.T) {
	cs, ns := ctlNamespace(t)
	createDeployment(t, cs, ns, "short-lived", "nginx:1.27", 2)
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		return deploymentAvailable(ctx, cs, ns, "short-lived", 2)
	})
	background := metav1.DeletePropagationBackground
	err := cs.AppsV1().Deployments(ns).Delete(t.Context(), "short-lived", metav1.DeleteOptions{PropagationPolicy: &background})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		rs, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if n := len(rs.Items) + len(pods.Items); n > 0 {
			return fmt.Errorf("%d ReplicaSets and %d Pods left", len(rs.Items), len(pods.Items))
		}
		return nil
	})
}

func TestNamespaceDeletionCompletes(t *testing.T) {
	cs := clientset(t, env.Cluster(ctlCluster).RESTConfig())
	ns := generateNamespace(t, cs, "doomed-")
	createDeployment(t, cs, ns, "inside", "nginx:1.27", 1)
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		return deploymentAvailable(ctx, cs, ns, "inside", 1)
	})
	if err := cs.CoreV1().Namespaces().Delete(t.Context(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("namespace %s still there (%v)", ns, err)
	})
}

func TestServiceAccountGetsAToken(t *testing.T) {
	cs, ns := ctlNamespace(t)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "default-token",
			Annotations: map[string]string{corev1.ServiceAccountNameKey: "default"},
		},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	if _, err := cs.CoreV1().Secrets(ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var token string
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		s, err := cs.CoreV1().Secrets(ns).Get(ctx, secret.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if token = string(s.Data[corev1.ServiceAccountTokenKey]); token == "" {
			return fmt.Errorf("secret %s has no token yet", secret.Name)
		}
		return nil
	})
	cfg := env.Cluster(ctlCluster).RESTConfig()
	cfg.BearerToken = token
	review, err := clientset(t, cfg).AuthenticationV1().SelfSubjectReviews().Create(t.Context(),
		&authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("authenticate with the token: %v", err)
	}
	if want := "system:serviceaccount:" + ns + ":default"; review.Status.UserInfo.Username != want {
		t.Errorf("token authenticates as %q, want %q", review.Status.UserInfo.Username, want)
	}
}

func TestControllersFollowTheClusterThroughStopAndStart(t *testing.T) {
	c := env.Cluster(ctlCluster)
	cs, ns := ctlNamespace(t)
	d := createDeployment(t, cs, ns, "survivor", "nginx:1.27", 1)
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		return deploymentAvailable(ctx, cs, ns, d.Name, 1)
	})
	pids := c.PIDs()
	if len(pids) != 4 {
		t.Fatalf("processes %v, want kube-apiserver, kube-controller-manager, kube-scheduler and kwok", pids)
	}
	c.Stop()
	for name, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still runs after Stop: %v", name, pid, err)
		}
	}
	if err := c.Start(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	cs = clientset(t, c.RESTConfig())
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
	if _, err := cs.AppsV1().Deployments(ns).UpdateScale(t.Context(), d.Name, scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		return deploymentAvailable(ctx, cs, ns, d.Name, 3)
	})
}

// ctlNamespace returns a client of the controller-backed cluster and a new
// namespace, deleted after the test.
func ctlNamespace(t *testing.T) (*kubernetes.Clientset, string) {
	t.Helper()
	cs := clientset(t, env.Cluster(ctlCluster).RESTConfig())
	ns := generateNamespace(t, cs, strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))[:min(len(t.Name()), 40)]+"-")
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	return cs, ns
}

func generateNamespace(t *testing.T, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func newPod(name, image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "main",
			Image: image,
		}}},
	}
}

// createPod creates pod once the namespace's default ServiceAccount exists
// (the ServiceAccount admission plugin refuses Pods before).
func createPod(t *testing.T, cs kubernetes.Interface, ns string, pod *corev1.Pod) {
	t.Helper()
	testenv.Eventually(t, settle, func(ctx context.Context) error {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
}

func createDeployment(t *testing.T, cs kubernetes.Interface, ns, name, image string, replicas int32) *appsv1.Deployment {
	t.Helper()
	labels := map[string]string{"app": name}
	progressDeadline := int32(15)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas:                &replicas,
			Selector:                &metav1.LabelSelector{MatchLabels: labels},
			ProgressDeadlineSeconds: &progressDeadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       newPod(name, image).Spec,
			},
		},
	}
	d, err := cs.AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func createJob(t *testing.T, cs kubernetes.Interface, ns, name, image string, backoffLimit int32) *batchv1.Job {
	t.Helper()
	spec := newPod(name, image).Spec
	spec.RestartPolicy = corev1.RestartPolicyNever
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: &backoffLimit,
			Template:     corev1.PodTemplateSpec{Spec: spec},
		},
	}
	job, err := cs.BatchV1().Jobs(ns).Create(t.Context(), job, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return job
}

func deploymentAvailable(ctx context.Context, cs kubernetes.Interface, ns, name string, replicas int32) error {
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	s := d.Status
	if deploymentCondition(s.Conditions, "Available") != "True" || s.AvailableReplicas != replicas || s.UpdatedReplicas != replicas {
		return fmt.Errorf("deployment %s not available: %+v", name, s)
	}
	return nil
}

func podsCrashLooping(ctx context.Context, cs kubernetes.Interface, ns string, want int) error {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	looping := 0
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount >= 2 && c.State.Waiting != nil && c.State.Waiting.Reason == "CrashLoopBackOff" && !podReady(&p) {
				looping++
			}
		}
	}
	if looping < want {
		return fmt.Errorf("%d of %d pods crash-looping (restartCount >= 2, CrashLoopBackOff, not Ready)", looping, want)
	}
	return nil
}

func jobCondition(ctx context.Context, cs kubernetes.Interface, ns, name string, typ batchv1.JobConditionType) error {
	j, err := cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, c := range j.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("job %s has no condition %s: %+v", name, typ, j.Status)
}

func ownedReplicaSets(t *testing.T, cs kubernetes.Interface, ns, deployment string) []appsv1.ReplicaSet {
	t.Helper()
	list, err := cs.AppsV1().ReplicaSets(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []appsv1.ReplicaSet
	for _, rs := range list.Items {
		if owner := metav1.GetControllerOf(&rs); owner != nil && owner.Kind == "Deployment" && owner.Name == deployment {
			out = append(out, rs)
		}
	}
	return out
}

func listPods(t *testing.T, cs kubernetes.Interface, ns string) []corev1.Pod {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

func podReady(p *corev1.Pod) bool {
	return podCondition(p.Status.Conditions, corev1.PodReady) == corev1.ConditionTrue
}

func deploymentCondition(conds []appsv1.DeploymentCondition, typ appsv1.DeploymentConditionType) corev1.ConditionStatus {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

func podCondition(conds []corev1.PodCondition, typ corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}
