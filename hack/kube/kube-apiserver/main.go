// Command kube-apiserver builds the upstream Kubernetes API server for regatta's
// test environment. It lives in its own module so that the product never
// requires k8s.io/kubernetes.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
