package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upshift-dev/upshift/internal/runner"
)

// errNoCluster: neither --kubeconfig nor KUBECONFIG nor ~/.kube/config.
var errNoCluster = errors.New("no cluster to talk to: set --kubeconfig or KUBECONFIG (for a local cluster: upshift cluster up)")

// kubeFlags are kubectl's --kubeconfig and --context (KUBECONFIG too),
// through the same library kubectl uses, so they resolve the same way.
type kubeFlags struct {
	cf *genericclioptions.ConfigFlags
	// runsNamespace keeps runs, backups and the lease: the controller's
	// --namespace, when it runs elsewhere than upshift-system.
	runsNamespace string
	// allowHTTP lets every plan's url sources and charts be fetched
	// over http:// (runner.Options.AllowHTTPSources).
	allowHTTP bool
}

func addKubeFlags(cmd *cobra.Command) *kubeFlags {
	kubeconfig, context := "", ""
	cf := &genericclioptions.ConfigFlags{KubeConfig: &kubeconfig, Context: &context}
	cf.AddFlags(cmd.PersistentFlags())
	kf := &kubeFlags{cf: cf}
	cmd.PersistentFlags().StringVar(&kf.runsNamespace, "runs-namespace", runner.DefaultNamespace, "where runs, backups and the run lease live (the controller's --namespace)")
	cmd.PersistentFlags().BoolVar(&kf.allowHTTP, "allow-http-sources", false,
		"fetch plans' url sources and helm charts over plain http:// too (a plan may allow it itself: spec.allowInsecureHTTP)")
	return kf
}

// sessionOptions are the options every command's session starts from.
func (k *kubeFlags) sessionOptions() runner.Options {
	return runner.Options{Namespace: k.runsNamespace, AllowHTTPSources: k.allowHTTP}
}

func (k *kubeFlags) restConfig() (*rest.Config, error) {
	// The loader falls back to http://localhost:8080 when nothing is
	// configured; say so instead of dialing it (in a pod, use its
	// service account).
	raw, err := k.cf.ToRawKubeConfigLoader().RawConfig()
	if err == nil && len(raw.Clusters) == 0 && len(raw.Contexts) == 0 {
		if cfg, ierr := rest.InClusterConfig(); ierr == nil {
			return cfg, nil
		}
		return nil, errNoCluster
	}
	cfg, err := k.cf.ToRESTConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, errNoCluster
		}
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 50, 300 // as kubectl: waits are watch-driven; bursts come from preflight, backups and applies
	return cfg, nil
}
