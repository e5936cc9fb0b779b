package testenv

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The label that marks the nodes kwok manages.
const (
	nodeLabel      = "type"
	nodeLabelValue = "kwok"
)

var getOptions = metav1.GetOptions{}

// NodeName returns the name of the i-th simulated node of a
// controller-backed cluster (0-based).
func NodeName(i int) string { return "kwok-node-" + strconv.Itoa(i) }

// ensureNodes creates the nodes that do not exist yet. A node is created with
// its capacity and addresses in its status, as a kubelet registers; kwok
// then makes it Ready. The nodes' leases left by an earlier kwok (before a
// restart) are deleted: kwok manages a node only once it holds its lease,
// and would otherwise wait for the old one to expire.
func ensureNodes(ctx context.Context, cs kubernetes.Interface, o Controllers, version string) error {
	for i := range o.Nodes {
		_, err := cs.CoreV1().Nodes().Create(ctx, newNode(i, o, version), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", NodeName(i), err)
		}
		err = cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, NodeName(i), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete the lease of node %s: %w", NodeName(i), err)
		}
	}
	return nil
}

func newNode(i int, o Controllers, version string) *corev1.Node {
	name := NodeName(i)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(o.NodeCPU),
		corev1.ResourceMemory: resource.MustParse(o.NodeMemory),
		corev1.ResourcePods:   *resource.NewQuantity(int64(o.NodePods), resource.DecimalSI),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				nodeLabel:                nodeLabelValue,
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
			},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"},
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "172.31.0." + strconv.Itoa(10+i)},
				{Type: corev1.NodeHostName, Address: name},
			},
			NodeInfo: corev1.NodeSystemInfo{
				Architecture:            "amd64",
				OperatingSystem:         "linux",
				KubeletVersion:          version,
				ContainerRuntimeVersion: "kwok",
			},
		},
	}
}

// nodesReady succeeds when want nodes are Ready.
func nodesReady(ctx context.Context, cs kubernetes.Interface, want int) error {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: nodeLabel + "=" + nodeLabelValue})
	if err != nil {
		return err
	}
	ready := 0
	for _, n := range list.Items {
		if isReady(&n) && len(n.Spec.Taints) == 0 {
			ready++
		}
	}
	if ready < want {
		return fmt.Errorf("%d of %d nodes Ready and untainted", ready, want)
	}
	return nil
}

// isReady reports a Ready node. The API server taints a new node
// not-ready; the node lifecycle controller lifts the taint once kwok made
// the node Ready, and only then are Pods scheduled on it.
func isReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
