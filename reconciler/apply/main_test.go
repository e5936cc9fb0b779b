package apply_test

import (
	"testing"

	"github.com/regatta-dev/regatta/internal/testenv"
)

// Cluster names of the test environment. "stop" is stopped and restarted by
// TestUnreachableCluster only; every other test shares "main" and uses its
// own profiles and namespaces. "ctl" has controllers and a kwok node, so
// its Deployments become Available by themselves (the health watch tests).
const (
	mainCluster = "main"
	stopCluster = "stop"
	ctlCluster  = "ctl"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{Clusters: []testenv.ClusterOptions{
		{Name: mainCluster}, {Name: stopCluster}, {Name: ctlCluster, Controllers: &testenv.Controllers{Nodes: 1}},
	}}, &env)
}
