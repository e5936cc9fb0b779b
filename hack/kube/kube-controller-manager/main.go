// Command kube-controller-manager builds the upstream Kubernetes controller
// manager for regatta's controller-backed test clusters (internal/testenv
// ClusterOptions.Controllers). It lives in the hack/kube module so that the
// product never requires k8s.io/kubernetes.
package main

import (
	"os"
	_ "time/tzdata" // CronJob time zones, as upstream's main does

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
