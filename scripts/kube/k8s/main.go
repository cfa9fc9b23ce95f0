// Command k8s is the Kubernetes control plane, node agents and kubectl in
// one binary, built from the published Kubernetes modules for the
// project's test cluster (scripts/kube-cluster.sh). It runs the component
// named by its first argument, or by the name it was invoked as:
//
//	k8s kube-apiserver --etcd-servers=...
//	k8s kubectl get nodes
//	ln -s k8s kubectl; ./kubectl get nodes
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // client auth plugins for kubectl
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
	kubeletpkg "k8s.io/kubernetes/pkg/kubelet"
)

// components maps a component's name to the constructor of its command.
var components = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
	"kube-proxy":              proxy.NewProxyCommand,
	"kubelet":                 func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
}

func main() {
	name := filepath.Base(os.Args[0])
	if name != "kubectl" && components[name] == nil {
		if len(os.Args) < 2 {
			usage()
		}
		// Shift the arguments so the component sees itself as the program.
		os.Args = os.Args[1:]
		name = os.Args[0]
	}
	if name == "kubectl" {
		logs.GlogSetter(kubectlcmd.GetLogVerbosity(os.Args)) //nolint:errcheck
		if err := cli.RunNoErrOutput(kubectlcmd.NewDefaultKubectlCommand()); err != nil {
			kubectlutil.CheckErr(err)
		}
		return
	}
	if name == "kubelet" {
		// The kubelet links every container's log into this folder; it
		// has no flag for it, and the cluster keeps all it writes under
		// its own work folder.
		if dir := os.Getenv("K8S_CONTAINER_LOGS_DIR"); dir != "" {
			kubeletpkg.ContainerLogsDir = dir
		}
	}
	newCommand, ok := components[name]
	if !ok {
		usage()
	}
	os.Exit(cli.Run(newCommand()))
}

// usage names the components and exits with status 2.
func usage() {
	names := []string{"kubectl"}
	for name := range components {
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "usage: k8s COMPONENT [flags]\ncomponents: %v\n", names)
	os.Exit(2)
}
