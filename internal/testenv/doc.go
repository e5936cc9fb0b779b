// Package testenv starts real, independent Kubernetes API servers for tests.
//
// Each cluster is a kube-apiserver process on a free 127.0.0.1 port with its
// own serving certificate, service-account keys, token authentication (an
// admin token in group system:masters) and RBAC authorization. Clusters store
// their objects in etcd: by default one etcd process shared by all clusters of
// an Env, each cluster under its own --etcd-prefix (cheaper than one etcd per
// cluster and just as isolated); Options.EtcdPerCluster gives each cluster its
// own etcd instead. A bare cluster runs no controllers: nothing becomes
// Ready by itself. A cluster with ClusterOptions.Controllers also runs
// kube-controller-manager, kube-scheduler and kwok, which simulates its
// nodes (controllers.go, kwok_stages.yaml): Pods are scheduled, run and turn
// Ready, or fail as their image or BehaviorAnnotation says.
//
// Binaries come from $REGATTA_BIN_DIR or <module root>/bin, where
// hack/build-kube.sh puts kube-apiserver-vX.Y.Z (one per stamped version),
// kubectl, kube-controller-manager, kube-scheduler and kwok; etcd is looked up in that folder and then on PATH (Debian's
// etcd-server). When something is missing, Start fails with a message that
// tells how to get it: tests that need the environment fail, never skip.
//
// All kube-apiserver binaries are compiled from one Kubernetes source (see
// hack/kube) and differ only in the version stamped at link time. Because
// kube-apiserver's emulation version defaults to its binary version, a
// binary stamped v1.35.4 not only reports v1.35.4 through /version but also
// serves the API surface of 1.35 (no storagemigration.k8s.io/v1, no
// MutatingAdmissionPolicy, which became GA in 1.36); no emulation flags are
// needed.
//
// A test package starts its clusters once:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) {
//		testenv.Main(m, testenv.Options{Clusters: []testenv.ClusterOptions{
//			{Name: "a", Version: "v1.36"}, {Name: "b"},
//		}}, &env)
//	}
//
// and a test that needs clusters of its own calls StartT. Every process runs
// in its own process group, is killed by Env.Stop and, should the test binary
// die without cleaning up, by the kernel (parent-death signal); folders left
// by a dead test binary are removed by the next Start.
package testenv
