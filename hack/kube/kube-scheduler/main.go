// Command kube-scheduler builds the upstream Kubernetes scheduler for
// regatta's controller-backed test clusters (internal/testenv
// ClusterOptions.Controllers). It lives in the hack/kube module so that the
// product never requires k8s.io/kubernetes.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
