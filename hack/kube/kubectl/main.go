// Command kubectl builds the upstream kubectl for regatta's tests and benchmarks.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		// Print the error the way upstream kubectl does, and exit non-zero.
		util.CheckErr(err)
	}
}
